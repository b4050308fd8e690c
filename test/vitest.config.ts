import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Lives in test/ so the repository's top level stays as the design fixes it;
// `npm test` points vitest here.
export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers on port 0 and share Redis/PostgreSQL: files run in
    // separate processes, a few at a time.
    pool: "forks",
    maxWorkers: 2,
  },
});
