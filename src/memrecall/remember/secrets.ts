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

/** A pattern and the group (0: the whole match) that is the secret; a pattern with a group has the `d` flag (where the group starts). */
interface Detector {
  kind: SecretKind;
  pattern: RegExp;
  group: number;
  /** A further check of the secret (a checksum, its context): `at` is where it starts in `text`. */
  valid?: (secret: string, text: string, at: number) => boolean;
}

/**
 * Words that name a password or a key, in English (password, pass, pwd,
 * api key, access token, secret key…) and in Chinese (密码, 口令, 密钥, 秘钥,
 * 令牌, Redis's requirepass). Not inside a longer word ("tokens",
 * "passport"), but after "_" (DB_PASSWORD, AWS_SECRET_ACCESS_KEY).
 */
const CUE =
  "(?:(?<![A-Za-z0-9])(?:password|passwd|passphrase|passcode|pwd|pass|requirepass|(?:client[_ -]?|webhook[_ -]?|app[_ -]?)?secret(?:[_ -]?(?:access[_ -]?)?key)?|api[_ -]?key|apikey|api[_ -]?token|access[_ -]?key(?:[_ -]?id)?|access[_ -]?token|auth[_ -]?token|secret[_ -]?token|token)(?![A-Za-z0-9])|密码|口令|密钥|秘钥|密匙|令牌)";
/** What joins a cue to its value: "is", "was set to", "=", ":", "是", "设置为", "改成了"… */
const JOIN =
  "(?:\\s{0,3}(?:[:=：]|=>|->)|\\s{1,3}(?:is|was|are|=)(?:\\s{1,3}(?:now|still|also))?(?:\\s{1,3}(?:set|changed|updated|reset)\\s{1,3}to)?|\\s{1,3}(?:(?:has\\s{1,3}been|was|is)\\s{1,3})?(?:set|changed|updated|reset)\\s{1,3}to|\\s{0,3}(?:也|还|就)?(?:是|为|设置为|设置成|设为|改成|改为|换成|变成|更新为|重置为)了?\\s{0,3}[:：]?)";
/**
 * A value as written after a cue: printable ASCII up to a space, a quote or
 * punctuation that ends a clause (passwords are typed on keyboards; a
 * Chinese word after 密码是 is what the password is like, not the password).
 */
const VALUE = "[\"'`“‘]?([!#-&(-+\\--:<-_a-~]{4,256})";

const DETECTORS: readonly Detector[] = [
  {
    kind: "private_key",
    // Up to the END line, or to the end of the text when the paste was cut.
    pattern: /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)/g,
    group: 0,
  },
  {
    kind: "token",
    // Prefixes the issuers document: GitHub, OpenAI-style, Slack, Stripe, AWS, Google, GitLab, npm, Grafana; and JWTs.
    pattern:
      /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}|sk-[A-Za-z0-9_-]{16,255}|xox[abeoprs]-[A-Za-z0-9-]{10,255}|xapp-[0-9]-[A-Za-z0-9-]{10,255}|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,255}|whsec_[A-Za-z0-9+/=]{10,255}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,255}|glsa_[A-Za-z0-9_]{20,255}|npm_[A-Za-z0-9]{36}|eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,2048})(?![A-Za-z0-9_])/g,
    group: 0,
  },
  {
    kind: "token",
    // A Slack incoming webhook: the URL is the credential.
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{20,300}/g,
    group: 0,
  },
  {
    kind: "token",
    // An AWS secret access key: 40 characters of base64 with no issuer prefix, so only beside what names it.
    pattern: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    group: 0,
    valid: awsSecretInContext,
  },
  {
    kind: "token",
    pattern: /\bBearer\s+([A-Za-z0-9._~+/-]{16,4096}=*)/dgi,
    group: 1,
  },
  {
    kind: "credentials",
    // scheme://user:password@host (the user may be empty: redis://:password@host): the password.
    pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/:@'"`]{0,128}:([^\s/@'"`]{1,256})@[^\s/'"`]{1,256}/dgi,
    group: 1,
  },
  {
    kind: "password",
    // "password is …", "pwd: …", "api key = …", "密码是…", "requirepass 设置为 …", "令牌：…".
    pattern: new RegExp(`${CUE}["'”’]?(?:\\s{1,3}(?:for|of|on)\\s[^\\n:=：]{1,40}?)?${JOIN}\\s{0,3}${VALUE}`, "dgi"),
    group: 1,
    valid: looksLikePassword,
  },
  {
    kind: "password",
    // "密码 Qw3rty!88", "password Gr@fana!2025": with nothing between, only what cannot be a word.
    pattern: new RegExp(`${CUE}\\s{1,3}${VALUE}`, "dgi"),
    group: 1,
    valid: looksStrong,
  },
  {
    kind: "password",
    // "密码记一下：…", "秘钥发你：…", "令牌如下：…": a few words of Chinese between the name and its colon.
    pattern: new RegExp(`(?:密码|口令|密钥|秘钥|密匙|令牌)[\u4e00-\u9fff]{1,6}s{0,3}[:：]s{0,3}${VALUE}`, "dg"),
    group: 1,
    valid: looksLikePassword,
  },
  {
    kind: "password",
    // "changed the jenkins admin password to …".
    pattern: new RegExp(
      `\\b(?:changed|set|reset|updated|rotated|switched)\\b[^.\\n]{0,40}?${CUE}\\s{1,3}to\\s{1,3}${VALUE}`,
      "dgi",
    ),
    group: 1,
    valid: looksLikePassword,
  },
  {
    kind: "password",
    pattern: /(?:^|\s)(?:-p|--password=)['"]?([^\s'"]{4,256})/dg,
    group: 1,
    // psql -p5432 is a port.
    valid: (s) => !/^\d+$/.test(s),
  },
  {
    kind: "id_number",
    pattern:
      /(?<![0-9A-Za-z])([1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx])(?![0-9A-Za-z])/dg,
    group: 1,
    valid: idChecksumHolds,
  },
  {
    kind: "phone",
    pattern: /(?<![0-9A-Za-z])(?:\+?86[- ]?)?(1[3-9]\d[- ]?\d{4}[- ]?\d{4})(?![0-9A-Za-z])/dg,
    group: 1,
  },
];

/** The secrets in `text`, in order, overlapping ones merged (a password inside a key block is the block). */
export function findSecrets(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  for (const d of DETECTORS) {
    // exec on the shared pattern, not matchAll: that copies the pattern on every call, and the
    // rules scan every sentence of a conversation several times.
    d.pattern.lastIndex = 0;
    for (let m = d.pattern.exec(text); m !== null; m = d.pattern.exec(text)) {
      const written = m[d.group];
      if (written === undefined) continue;
      const start = d.group === 0 ? m.index : m.indices![d.group]![0];
      // A value that ends a sentence: "the password is hunter2." (a bracket closed that the value did not open).
      const secret = d.group === 0 ? written : withoutTrailingPunctuation(written);
      // A placeholder of ours, or a template's, is not a secret (<your-api-key>, ${DB_PASSWORD}, ****).
      if (isPlaceholder(secret) || (d.valid && !d.valid(secret, text, start))) continue;
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

/**
 * `text` (a sensitive memory's summary or reason) with its secrets labelled,
 * and also every run that could be a key the scanner does not know: twelve
 * or more characters of a key's alphabet holding letters and digits
 * (a prefix-less token beside a known one). Names such as
 * AWS_SECRET_ACCESS_KEY stay: they hold no digit.
 */
export function redactForSensitive(text: string): string {
  return redactSecrets(text).replace(/(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{12,}(?![A-Za-z0-9+/=_-])/g, (run) =>
    /[A-Za-z]/.test(run) && /[0-9]/.test(run) ? LABELS.token : run,
  );
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
 * stored in vault", "my password is incorrect"): it has a digit or a sign,
 * mixes cases, or is a word of six letters or more that English does not
 * use after "password is" ("the mailbox password is correcthorsebattery").
 */
function looksLikePassword(value: string): boolean {
  if (/^[a-z]+:\/\/|^~?\//i.test(value) || /@[\w-]+\.[a-z]{2,}$/i.test(value)) return false;
  if (/^[A-Za-z]+$/.test(value) && !(/[a-z]/.test(value.slice(1)) && /[A-Z]/.test(value.slice(1)))) {
    return value.length >= 6 && !NOT_PASSWORDS.has(value.toLowerCase());
  }
  return true;
}

/**
 * A value right after a cue with nothing between ("密码 Qw3rty!88"): taken
 * only when no word, name or path could be written so — letters and digits,
 * six characters or more, not an option (--no-verify) or a setting
 * (TTL=3600): "K8s Secret pg-prod-cred" names where a password is.
 */
function looksStrong(value: string): boolean {
  return (
    value.length >= 6 &&
    /[A-Za-z]/.test(value) &&
    /[0-9]/.test(value) &&
    !value.startsWith("-") &&
    !/=./.test(value) &&
    looksLikePassword(value)
  );
}

/** Words English puts after "password is", "the token was", "api key:" that are not the password. */
const NOT_PASSWORDS = new Set(
  (
    "incorrect invalid expired expiring required missing correct stored changed rotated managed generated encrypted " +
    "hashed hidden masked redacted sensitive secure insecure simple complex different already always really optional " +
    "mandatory needed necessary enabled disabled active inactive revoked deleted removed attached included listed " +
    "written provided shared unknown temporary permanent random unique default custom inside outside within please " +
    "something anything nothing whatever should cannot available unavailable working broken locked unlocked " +
    "insensitive updated expires configured somewhere elsewhere private public actually probably definitely " +
    "literally currently usually supposed another labelled labeled attached emailed printed pinned posted saved " +
    "synced issued renewed refreshed leaked compromised exposed blocked protected protects requires includes " +
    "contains expected accepted rejected allowed forbidden specified described documented mentioned explained " +
    "limited restricted scoped tied linked bound assigned granted handled checked verified validated"
  ).split(" "),
);

/** A template's stand-in, not a value: <your-api-key>, ${DB_PASSWORD}, $TOKEN, {{ secret }}, YOUR_KEY_HERE, ****, xxxx. */
function isPlaceholder(value: string): boolean {
  return (
    /^\[[^\]]*已隐去\]$|^⟦secret:\d+⟧$/.test(value) ||
    /<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_]+%$/.test(value) ||
    /^(?:your|my)[_-]|(?:^|[_-])(?:here|placeholder)$|replace[_-]?me|change[_-]?me|^(?:x+|\*+|•+|\.+|#+)$/i.test(value)
  );
}

/** `value` without the sentence's full stop after it, or a closing bracket it did not open. */
function withoutTrailingPunctuation(value: string): string {
  let v = value.replace(/\.+$/, "");
  if (v.endsWith(")") && !v.includes("(")) v = v.slice(0, -1);
  return v.length >= 4 ? v : value;
}

/**
 * 40 characters of base64 are an AWS secret access key when they mix cases
 * and digits (a git SHA is lower-case hex) and the text names one: an access
 * key id (AKIA…, ASIA…) anywhere in it, or "aws", "secret", "SK", 密钥 just before.
 */
function awsSecretInContext(secret: string, text: string, at: number): boolean {
  if (!/[A-Z]/.test(secret) || !/[a-z]/.test(secret) || !/[0-9]/.test(secret)) return false;
  const before = text.slice(Math.max(0, at - 60), at);
  return /(?:AKIA|ASIA)[0-9A-Z]{16}/.test(text) || /aws|secret|\bSK\b|密钥|秘钥/i.test(before);
}

/** GB 11643: the 18th character of a resident ID is a checksum of the first 17. */
function idChecksumHolds(id: string): boolean {
  const weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += Number(id[i]) * weights[i]!;
  return "10X98765432"[sum % 11] === id[17]!.toUpperCase();
}
