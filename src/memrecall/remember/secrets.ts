/**
 * Secrets in what a user pasted: tokens, passwords, private keys, connection
 * strings with credentials, ID and phone numbers. A memory holding one is
 * stored as sensitive, and the secret is replaced by a label wherever text
 * leaves the memory's content: summaries, keywords, the operation log, the
 * LLM's prompt. Every pattern is linear (no nested quantifiers, bounded
 * repeats), so a hostile message cannot make the scan slow.
 */

/** What kind of secret a span is; its label is what a summary shows instead. */
export type SecretKind = "private_key" | "token" | "password" | "credentials" | "id_number" | "phone";

export interface SecretSpan {
  kind: SecretKind;
  start: number;
  end: number;
}

const LABELS: Record<SecretKind, string> = {
  private_key: "[私钥已隐去]",
  token: "[令牌已隐去]",
  password: "[密码已隐去]",
  credentials: "[凭据已隐去]",
  id_number: "[身份证号已隐去]",
  phone: "[手机号已隐去]",
};

/** A pattern and the group (0: the whole match) that is the secret. */
interface Detector {
  kind: SecretKind;
  pattern: RegExp;
  group: number;
  /** A further check of the secret (a checksum). */
  valid?: (secret: string) => boolean;
}

const DETECTORS: readonly Detector[] = [
  {
    kind: "private_key",
    // Up to the END line, or to the end of the text when the paste was cut.
    pattern: /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)/g,
    group: 0,
  },
  {
    kind: "token",
    // Prefixes the issuers document: GitHub, OpenAI-style, Slack, AWS, Google, GitLab, npm; and JWTs.
    pattern:
      /\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}|sk-[A-Za-z0-9_-]{16,255}|xox[abprs]-[A-Za-z0-9-]{10,255}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,255}|npm_[A-Za-z0-9]{36}|eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,2048})/g,
    group: 0,
  },
  {
    kind: "token",
    pattern: /\bBearer\s+([A-Za-z0-9._~+/-]{16,4096}=*)/gi,
    group: 1,
  },
  {
    kind: "credentials",
    // scheme://user:password@host: the password.
    pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/:@'"`]{1,128}:([^\s/@'"`]{1,256})@[^\s/'"`]{1,256}/gi,
    group: 1,
  },
  {
    kind: "password",
    // password=..., "password": "...", 密码：..., api_key: ..., -p'...' on a command line.
    pattern:
      /(?:\b(?:password|passwd|pwd|pass|secret|client_secret|api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?key|auth[_-]?token|access[_-]?token|token)\b|密码|口令|密钥|令牌)["']?\s{0,3}(?:[:=：]|是|为|is)\s{0,3}["'`]?([^\s"'`,;，；。]{4,256})/gi,
    group: 1,
    valid: looksLikePassword,
  },
  {
    kind: "password",
    pattern: /(?:^|\s)(?:-p|--password=)['"]?([^\s'"]{4,256})/g,
    group: 1,
    // psql -p5432 is a port.
    valid: (s) => !/^\d+$/.test(s),
  },
  {
    kind: "id_number",
    pattern:
      /(?<![0-9A-Za-z])([1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx])(?![0-9A-Za-z])/g,
    group: 1,
    valid: idChecksumHolds,
  },
  {
    kind: "phone",
    pattern: /(?<![0-9A-Za-z])(?:\+?86[- ]?)?(1[3-9]\d[- ]?\d{4}[- ]?\d{4})(?![0-9A-Za-z])/g,
    group: 1,
  },
];

/** The secrets in `text`, in order, overlapping ones merged (a password inside a key block is the block). */
export function findSecrets(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  for (const d of DETECTORS) {
    d.pattern.lastIndex = 0;
    for (const m of text.matchAll(d.pattern)) {
      const secret = m[d.group];
      if (secret === undefined || (d.valid && !d.valid(secret))) continue;
      const start = m.index + (d.group === 0 ? 0 : m[0].indexOf(secret));
      // A placeholder of ours is not a secret (the LLM's content quotes them back).
      if (/^\[[^\]]*已隐去\]$|^⟦secret:\d+⟧$/.test(secret)) continue;
      spans.push({ kind: d.kind, start, end: start + secret.length });
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: SecretSpan[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

/** True when `text` holds a secret. */
export function hasSecret(text: string): boolean {
  return findSecrets(text).length > 0;
}

/** `text` with every secret replaced by its label ("[令牌已隐去]"). */
export function redactSecrets(text: string): string {
  return replaceSpans(text, findSecrets(text), (s) => LABELS[s.kind]);
}

/**
 * `text` with each secret replaced by a numbered placeholder (⟦secret:1⟧),
 * and the secrets by placeholder: what the LLM reads, so no secret leaves
 * the service, while the memory it proposes can still hold the secret.
 */
export function maskSecrets(text: string, vault: Map<string, string>): string {
  return replaceSpans(text, findSecrets(text), (_span, secret) => {
    for (const [placeholder, known] of vault) if (known === secret) return placeholder;
    const placeholder = `⟦secret:${vault.size + 1}⟧`;
    vault.set(placeholder, secret);
    return placeholder;
  });
}

/** `text` with the vault's placeholders put back as the secrets they stand for. */
export function unmaskSecrets(text: string, vault: ReadonlyMap<string, string>): string {
  return text.replace(/⟦secret:\d+⟧/g, (p) => vault.get(p) ?? p);
}

/** `text` with the vault's placeholders shown as a label: for a summary. */
export function labelPlaceholders(text: string): string {
  return text.replace(/⟦secret:\d+⟧/g, "[已隐去]");
}

function replaceSpans(
  text: string,
  spans: readonly SecretSpan[],
  by: (span: SecretSpan, secret: string) => string,
): string {
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + by(s, text.slice(s.start, s.end));
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * A value after "password is" that is a password, not a word ("the token is
 * stored in vault", "密码是多少"): it has a digit or a sign, or mixes cases.
 */
function looksLikePassword(value: string): boolean {
  return /[0-9]/.test(value) || /[^A-Za-z\p{Script=Han}]/u.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value));
}

/** GB 11643: the 18th character of a resident ID is a checksum of the first 17. */
function idChecksumHolds(id: string): boolean {
  const weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(id[i]) * weights[i]!;
  return "10X98765432"[sum % 11] === id[17]!.toUpperCase();
}
