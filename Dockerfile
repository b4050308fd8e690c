# context-loader: the compiled service on Node 22. docs/deploy.md says how to build, run and configure it.
#
#   docker build -t context-loader .
#   docker run --rm -p 127.0.0.1:8080:8080 -v context-loader-data:/data context-loader
#
# BASE is any Debian-based Node 22 image with npm, Node's headers under /usr/local/include/node and a
# user `node` (uid 1000), as the official images have; CI builds a stand-in for machines that cannot
# pull one (.ci/base-image). No `# syntax=` line: it would make BuildKit pull a frontend image.
ARG BASE=node:22-bookworm-slim

# Production dependencies. better-sqlite3 is compiled here from source against the base's own Node
# headers (no prebuilt download), so this stage has the compiler and the runtime stage does not.
# An extra CA bundle for the registry (a proxy that re-signs TLS) is a BuildKit secret, absent by
# default: docker build --secret id=extra_ca,src=/path/to/ca-bundle.pem. npm's cache is a BuildKit cache
# mount: kept between builds on one machine, never in a layer.
FROM ${BASE} AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra_ca --mount=type=cache,target=/root/.npm \
  if [ -f /run/secrets/extra_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; fi; \
  npm_config_nodedir=/usr/local npm ci --omit=dev --no-audit --no-fund

# The build: `npm run build` (esbuild) with the esbuild version the lock file pins, fetched alone
# rather than with every development dependency. Bare imports stay imports (--packages=external), so
# this stage needs no node_modules and runs beside the one above.
FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY gen ./gen
COPY src ./src
RUN --mount=type=secret,id=extra_ca --mount=type=cache,target=/root/.npm \
  if [ -f /run/secrets/extra_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; fi; \
  esbuild=$(node -p "require('./package-lock.json').packages['node_modules/esbuild'].version") \
  && npm exec --yes --package="esbuild@${esbuild}" -- npm run build

FROM ${BASE}
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=8080 \
  SQLITE_PATH=/data/memories.sqlite
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY gen/descriptors.binpb ./gen/
COPY data ./data
COPY --from=build /app/dist ./dist
# The SQLite memories live in the volume; it is the only place the service writes (with a tmpfs
# /tmp the root filesystem can be read-only). A new named volume takes this directory's owner.
RUN mkdir /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# node is PID 1 and handles SIGTERM itself: it stops serving, drains in-flight calls for
# SHUTDOWN_GRACE_MS (10 s by default) and exits 0. Give `docker stop -t` / the orchestrator's grace
# period a few seconds more than that.
CMD ["node", "--enable-source-maps", "dist/main.js"]
