import type { ConversationMessage } from "../recall/input";
import { type Candidate, summaryOf } from "./candidates";
import type { MemoryKind } from "./input";
import { findSecrets, hasSecret } from "./secrets";

/**
 * Rules mode: only what the user states explicitly is kept, never what an
 * assistant wrote.
 *
 * - "记住…", "remember that…": what follows, typed by what it says;
 * - "以后…", "from now on…": a preference that changes an earlier one;
 * - "我喜欢/偏好/不要…", "I prefer…", "don't…": a preference;
 * - "我们决定…", "we decided…": a decision;
 * - roles stated ("小林是我们组的实习生", "I'm a designer");
 * - commands in code blocks (or inline code that starts with a command),
 *   `key=value` configuration lines and pairs, options written as code;
 * - a pasted secret (kept as a sensitive memory);
 * - after "记一下：" or "two things before I forget:", every sentence that follows.
 *
 * Questions, hypotheticals ("如果以后…"), one-offs ("这次先…") and what
 * someone else said ("老板说他喜欢…") are not statements of the user's.
 */
export function extractByRules(messages: readonly ConversationMessage[]): Candidate[] {
  const out: Candidate[] = [];
  messages.forEach((m, i) => {
    if (m.role !== "user") return;
    const at = m.time;
    const { prose: withKeys, blocks } = splitCode(m.content);
    // A private key pasted outside a fence is one memory, whole: line by line it would read as configuration.
    const { prose, keys } = splitPrivateKeys(withKeys);
    for (const k of keys)
      out.push({
        memory_type: "configuration",
        content: k.content,
        summary: k.about === "" ? "私钥" : summaryOf(k.about, "私钥："),
        sources: [i],
        stated_at: at,
        revises: false,
        why: "用户贴出的私钥（敏感）",
      });
    for (const b of blocks) {
      const kind = blockKind(b.lang, b.body);
      // Code pasted to be fixed, explained or formatted is the question's material, not something to keep.
      if (!kind || HELP_REQUEST.test(b.intro)) continue;
      const intro = b.intro === "" ? "" : `${b.intro}\n`;
      const content = `${intro}\`\`\`${b.lang}\n${b.body}\n\`\`\``;
      const firstLine = b.body.split("\n").find((l) => l.trim() !== "") ?? "";
      out.push({
        memory_type: kind,
        content,
        // A command says itself best; a configuration by what the user called it.
        summary:
          kind === "command"
            ? summaryOf(firstLine.replace(/^\s*\$\s*/, ""), "命令：")
            : summaryOf(b.intro !== "" ? b.intro : firstLine, "配置："),
        sources: [i],
        stated_at: at,
        revises: false,
        why: kind === "command" ? "用户贴出的命令" : "用户贴出的配置",
      });
    }
    const proseLines = prose.split("\n");
    const configLines = proseLines.filter((l) => CONFIG_LINE.test(l));
    if (configLines.length > 0) {
      // With the line that says what they are ("Here are the AWS creds for CI:"), when there is one.
      const first = proseLines.indexOf(configLines[0]!);
      const intro = proseLines
        .slice(0, first)
        .reverse()
        .find((l) => l.trim() !== "")
        ?.trim();
      const content = [...(intro && [...intro].length <= 200 ? [intro] : []), ...configLines.map((l) => l.trim())].join(
        "\n",
      );
      out.push({
        memory_type: "configuration",
        content,
        summary: summaryOf(configLines.map((l) => l.trim().split(/\s*[=]\s*/)[0]).join(", "), "配置："),
        sources: [i],
        stated_at: at,
        revises: false,
        why: "用户写出的 key=value 配置",
      });
    }
    const rest = prose
      .split("\n")
      .filter((l) => !CONFIG_LINE.test(l))
      .join("\n");
    const taken = new Set<string>();
    for (const inline of rest.matchAll(/`([^`\n]{3,500})`/g)) {
      const code = inline[1]!.trim();
      const kind = isCommand(code) ? "command" : OPTIONS.test(code) ? "configuration" : undefined;
      if (!kind) continue;
      const sentence = sentenceAround(rest, inline.index);
      taken.add(sentence);
      out.push({
        memory_type: kind,
        content: sentence,
        summary: summaryOf(code, kind === "command" ? "命令：" : "配置："),
        sources: [i],
        stated_at: at,
        revises: false,
        why: kind === "command" ? "用户写出的命令" : "用户写出的参数",
      });
    }
    // After "记一下：" or "two things before I forget:", every sentence that follows is to be kept.
    let keepRest = false;
    for (const s of sentences(rest)) {
      if (taken.has(s)) continue;
      if (REMEMBER_LEAD.test(s)) {
        keepRest = true;
        const after = s.replace(REMEMBER_LEAD, "").trim();
        if ([...after].length < 4) continue;
      }
      const last = out[out.length - 1];
      // "Please stop using MM/DD/YYYY. Use ISO dates.": the instruction completes the preference before it.
      if (last?.memory_type === "user_preference" && last.sources[0] === i && IMPERATIVE.test(s) && !QUESTION.test(s)) {
        last.content = `${last.content} ${s}`;
        continue;
      }
      const c = statement(s, keepRest);
      if (c) out.push({ ...c, sources: [i], stated_at: at });
    }
  });
  return out;
}

/** A fenced code block, with the prose line just before it (what the user said it is). */
interface CodeBlock {
  lang: string;
  body: string;
  intro: string;
}

/** The message without its fenced code blocks, and the blocks. An unclosed fence runs to the end. */
function splitCode(text: string): { prose: string; blocks: CodeBlock[] } {
  const blocks: CodeBlock[] = [];
  let prose = "";
  let at = 0;
  // The info string is bounded: unbounded, a line of backticks with no line end is quadratic.
  const fence = /```([A-Za-z0-9_+-]{0,20})[^\n]{0,200}\n([\s\S]*?)(?:```|$)/g;
  for (const m of text.matchAll(fence)) {
    const before = text.slice(at, m.index);
    prose += `${before}\n`;
    const lines = before.split("\n").filter((l) => l.trim() !== "");
    const intro = (lines[lines.length - 1] ?? "").trim();
    blocks.push({
      lang: m[1]!.toLowerCase(),
      body: m[2]!.replace(/\s+$/, ""),
      intro: [...intro].length <= 200 ? intro : "",
    });
    at = m.index + m[0].length;
  }
  prose += text.slice(at);
  return { prose, blocks };
}

/**
 * The text without its private key blocks, and each block with the lines
 * that say what it is (the line before it and the line after it).
 */
function splitPrivateKeys(text: string): { prose: string; keys: { content: string; about: string }[] } {
  const spans = findSecrets(text).filter((s) => s.kind === "private_key");
  if (spans.length === 0) return { prose: text, keys: [] };
  const keys: { content: string; about: string }[] = [];
  let prose = "";
  let at = 0;
  for (const s of spans) {
    const before = lastLine(text.slice(at, s.start));
    const after =
      text
        .slice(s.end)
        .split("\n")
        .find((l) => l.trim() !== "" && !l.includes("-----BEGIN"))
        ?.trim() ?? "";
    const about = [...before].length <= 200 && before !== "" ? before : [...after].length <= 200 ? after : "";
    keys.push({ content: [before, text.slice(s.start, s.end), after].filter((l) => l !== "").join("\n"), about });
    prose += `${text.slice(at, s.start)}\n`;
    at = s.end;
  }
  return { prose: prose + text.slice(at), keys };
}

function lastLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return (lines[lines.length - 1] ?? "").trim();
}

/** A command line: a known program, or a lower-case word followed by an option or a path. */
function isCommand(line: string): boolean {
  return COMMAND_START.test(line) || /^\s*(?:\$\s*)?[a-z][\w.-]{1,30}\s+(?:-{1,2}[A-Za-z]|\/|\.\/|~\/)/.test(line);
}

/** Options or settings written as code: -Xmx4g -XX:+UseG1GC, --max-old-space-size=512, key=value pairs. */
const OPTIONS = /^(?:-{1,2}[A-Za-z][\w:+.=-]*\s*)+$|^(?:[A-Za-z_][\w.-]{0,63}=\S+\s*){1,}$/;

const SHELL_LANGS = new Set([
  "bash",
  "sh",
  "shell",
  "zsh",
  "console",
  "terminal",
  "powershell",
  "ps",
  "ps1",
  "cmd",
  "bat",
  "fish",
  "sql",
  "psql",
  "mysql",
]);
const CONFIG_LANGS = new Set(["ini", "env", "dotenv", "properties", "toml", "yaml", "yml", "conf", "cfg", "json"]);

/** The command-line programs a pasted line may start with. */
const COMMAND_START =
  /^\s*(?:\$\s*|#\s+)?(?:sudo\s+)?(?:kubectl|docker|docker-compose|podman|helm|git|npm|npx|pnpm|yarn|node|python3?|pip3?|go|cargo|make|mvn|gradle|java|psql|mysql|mysqldump|pg_dump|pg_restore|redis-cli|mongo|mongosh|curl|wget|ssh|scp|rsync|systemctl|journalctl|service|terraform|ansible(?:-playbook)?|aws|gcloud|az|kubectx|kubens|k9s|tar|grep|find|awk|sed|ls|cd|cat|tail|head|chmod|chown|crontab|nginx|openssl|ping|dig|nslookup|telnet|nc|ps|kill|top|df|du|free|export|source|bash|sh|select|insert|update|delete|create|alter|drop|show|explain|vacuum|analyze)\b/i;

/** A configuration line: KEY=value or KEY: value with an identifier key (export allowed). */
const CONFIG_LINE = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]{0,63}\s*=\s*\S/;
const YAML_LINE = /^\s*[A-Za-z_][A-Za-z0-9_.-]{0,63}\s*:\s+\S/;

/** What a code block holds worth keeping: a command, a configuration, or nothing (code, a log). */
function blockKind(lang: string, body: string): MemoryKind | undefined {
  const lines = body.split("\n").filter((l) => l.trim() !== "" && !/^\s*(?:#|\/\/|--)/.test(l));
  if (lines.length === 0) return undefined;
  if (SHELL_LANGS.has(lang) || isCommand(lines[0]!)) return "command";
  const configLike = lines.filter((l) => CONFIG_LINE.test(l) || YAML_LINE.test(l)).length;
  if (CONFIG_LANGS.has(lang) || configLike / lines.length >= 0.6) return "configuration";
  return undefined;
}

/** The sentences of prose: split after 。！？；!?; and line ends, and after ". " in English. */
function sentences(prose: string): string[] {
  return (
    prose
      // "!" inside a password is not an end: an English end is followed by a space.
      .split(/(?<=[。！？；\n])|(?<=[.!?;])\s+/)
      .map((s) => s.trim())
      .filter((s) => [...s].length >= 4)
  );
}

/** The sentence of `text` around position `at`. */
function sentenceAround(text: string, at: number): string {
  const before = text.slice(0, at);
  const start = Math.max(...["。", "！", "？", "；", "!", "?", "\n", ". "].map((p) => before.lastIndexOf(p))) + 1;
  const after = text.slice(at);
  const ends = ["。", "！", "？", "；", "!", "?", "\n"].map((p) => after.indexOf(p)).filter((i) => i >= 0);
  const end = ends.length > 0 ? at + Math.min(...ends) + 1 : text.length;
  return text.slice(start, end).trim();
}

const QUESTION =
  /[?？]\s*$|(?:吗|呢|么|没有)\s*[。.!！]?\s*$|^(?:如果|假如|要是|假设|万一|是否|能不能|可不可以|可以吗|怎么|为什么|what if|if\b|should\b|can you|could you|would you|how\b|what\b|why\b|when\b|where\b|which\b|do you|does\b|is it|are there)/i;
/** A hypothetical: one that starts so, or a future change only supposed ("如果以后…", "if we ever…"). */
const HYPOTHETICAL =
  /^(?:如果|假如|要是|假设|万一|if\b|what if\b|suppose\b|in case\b)|(?:如果|假如|要是|万一)(?:以后|今后|哪天)|\bif (?:we|I|you) (?:ever|later|someday)\b/i;
const ONE_OFF =
  /这次|这一次|这回|暂时|临时|今天先|先用|先这样|只这一次|for now|this time|just this once|for this one|for today/i;
const OTHERS =
  /(?:老板|领导|经理|主管|同事|客户|对方|产品|他|她|他们|她们|别人|有人)(?:说|觉得|认为|喜欢|想要|希望|讨厌)|\b(?:he|she|they|my (?:boss|manager|colleague|client)|the client|someone)\s+(?:said|says|thinks|likes|prefers|wants)\b/i;

/** An intro that asks for help with the code below it. */
const HELP_REQUEST =
  /帮我|帮忙|请你|能不能|可以帮|为什么|怎么回事|报错了|出错了|看看|格式化|改一下|解释一下|优化一下|\b(?:can|could|would) you\b|\bplease (?:fix|check|review|explain|format|help)|\bwhy (?:does|is|do|did)\b|\bwhat'?s wrong\b|\bhelp me\b/i;

/** Two or more key=value settings in one sentence: "host=mq.prod.internal，port=5672". */
const CONFIG_PAIRS =
  /[A-Za-z_][\w.-]{0,63}=[^\s，,；;=]{1,200}[\s，,；;]{1,3}(?:[^\s=]{0,20}[\s，,；;]{0,3})?[A-Za-z_][\w.-]{0,63}=\S/;
/** A sentence that goes on with an instruction: "Use ISO dates.", "用 ISO 日期". */
const IMPERATIVE =
  /^(?:please\s+)?(?:use|always|prefer|write|reply|format|put|keep|stick to|go with)\b|^(?:请)?(?:用|改用|统一用|都用|一律用|换成)/i;

/** A sentence that announces what follows is to be kept: "记一下：", "two things before I forget:". */
const REMEMBER_LEAD =
  /^.{0,20}?(?:before I forget|for the record|note to self|记一下|记住|备忘|先记下|以下几点|几件事)\s*[:：]\s*/i;
const REMEMBER =
  /^(?:好的?[，,]?\s*)?(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记一下|记下来?|记得|备注一下)[：:，,\s]*(.+)$/s;
const REMEMBER_EN =
  /\b(?:please\s+)?(?:remember|note down|keep in mind|don't forget|do not forget)(?:\s+that)?\s*[:,]?\s+(.+)$/is;
const CHANGE =
  /以后|今后|往后|从现在起|从现在开始|从今天起|从今往后|改用|改成|改为|换成|换到|搬到|迁到|不再|别再|不要再|\bfrom now on\b|\bgoing forward\b|\bfrom today\b|\binstead\b|\bno longer\b|\bfrom here on\b|\bswitched (?:over )?to\b|\bmoved (?:over )?to\b|\bmigrated to\b|\bstop (?:using|adding|sending|writing|suggesting)\b/i;
const NOT_A_CHANGE = /以后再|以后有空|以后再说|以后看|以后看看/;
const PREFERENCE =
  /我(?:比较|更|一般|通常|总是|一直|还是|很|挺|非常|最)?(?:喜欢|偏好|习惯|倾向于?|爱用|想要|希望)|我(?:不太|不怎么|不大|一点也不|并不)?(?:不喜欢|喜欢|讨厌|受不了|不想要?)|(?:^|[，,。\s])(?:请)?(?:不要|别|不用|勿|一律|统一|默认)(?:再)?(?:给我)?(?:用|写|加|发|放|做|生成|输出|使用|带)|\bI\s+(?:really\s+|generally\s+|usually\s+|always\s+|much\s+)?(?:prefer|like|love|hate|dislike|want|would rather|'d rather)\b|\b(?:please\s+)?(?:don't|do not|never|stop)\s+(?:use|using|add|adding|write|send|give|put|include|show|format|reply|suggest|suggesting|recommend|mention|propose)\b|\balways\s+(?:use|reply|write|answer|format|show|give)\b/i;
const DECISION =
  /(?:我们|咱们|团队|大家)?(?:决定|定了|就这么定|就这样定|拍板|敲定|确定了|最终选|最终用)|那就(?:这样|这么办|这么定|用)|\b(?:we|I)(?:'ve|\s+have)?\s+(?:decided|agreed|settled on|chose|chosen)\b|\b(?:we|I)(?:'ll|\s+will|'re going|\s+are going|'m going|\s+am going)\s+(?:to\s+)?go(?:ing)?\s+with\b|\blet's go with\b|\bdecision\s*:/i;
const UNDECIDED = /还没(?:有)?(?:决定|定)|没定|未定|待定|不确定|not decided|haven't decided|undecided|not sure/i;

/** A sentence as a statement worth keeping (`announced`: the user said to keep what follows), or undefined. */
function statement(sentence: string, announced: boolean): Omit<Candidate, "sources" | "stated_at"> | undefined {
  const remembered = REMEMBER.exec(sentence) ?? REMEMBER_EN.exec(sentence);
  if (remembered && [...remembered[1]!.trim()].length >= 2 && !QUESTION.test(sentence)) {
    const content = remembered[1]!.trim();
    return {
      memory_type: kindOfSecretOr(content),
      content,
      summary: summaryOf(content),
      revises: CHANGE.test(content) && !NOT_A_CHANGE.test(content),
      why: "用户明确要求记住",
    };
  }
  // A pasted secret is kept whatever else the sentence is (stored as sensitive).
  if (hasSecret(sentence)) {
    return {
      memory_type: kindOfSecretOr(sentence),
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "用户给出的密钥或个人信息（敏感）",
    };
  }
  if (QUESTION.test(sentence)) {
    // "Marco is the SRE lead — can you draft…?": the statement before the question still stands.
    const cut = Math.max(...["—", "，", ", "].map((p) => sentence.lastIndexOf(p)));
    const before = sentence.slice(0, Math.max(cut, 0)).trim();
    return [...before].length >= 8 ? statement(before, announced) : undefined;
  }
  if (CONFIG_PAIRS.test(sentence))
    return {
      memory_type: "configuration",
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "用户写出的 key=value 配置",
    };
  // What someone else said is theirs: only what comes before it can be the user's statement.
  const others = OTHERS.exec(sentence);
  if (others) {
    const before = sentence.slice(0, others.index).replace(/[，,；;\s]+$/, "");
    return [...before].length >= 4 ? statement(before, announced) : undefined;
  }
  if (HYPOTHETICAL.test(sentence)) return undefined;
  const changes = CHANGE.test(sentence) && !NOT_A_CHANGE.test(sentence);
  if (changes) {
    const kind = kindOf(sentence);
    return {
      memory_type: kind === "general" || kind === "project_fact" ? "user_preference" : kind,
      content: sentence,
      summary: summaryOf(sentence),
      revises: true,
      why: "用户说明以后的做法",
    };
  }
  if (ONE_OFF.test(sentence)) return undefined;
  if (PREFERENCE.test(sentence))
    return {
      memory_type: "user_preference",
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "用户表达的偏好",
    };
  if (DECISION.test(sentence) && !UNDECIDED.test(sentence))
    return {
      memory_type: "decision",
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "明确作出的决定",
    };
  if (ROLE.test(sentence))
    return {
      memory_type: "person_role",
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "人员与角色",
    };
  if (announced)
    return {
      memory_type: kindOf(sentence),
      content: sentence,
      summary: summaryOf(sentence),
      revises: false,
      why: "用户要求记下",
    };
  return undefined;
}

/** Someone's role stated: "小林是我们组新来的实习生", "Marco is the SRE lead", "I'm a designer". */
const ROLE =
  /(?:负责人|对接人|联系人|经理|主管|组长|架构师)(?:是|为)\S{1,6}|(?:是|担任|当)(?:我们|咱们|公司|组里|团队|这边)?\S{0,8}?(?:负责人|实习生|经理|主管|组长|架构师|DBA|运维|产品经理|项目经理|技术负责人|对接人|联系人|值班)|\b(?:is|as)\s+(?:our|the|my)\s+(?:[\w-]+\s+){0,2}(?:lead|manager|owner|dba|pm|architect|contact|intern|on-?call|point of contact)\b|\bI'?m\s+(?:a|an|the)\s+(?:[\w-]+\s+)?(?:designer|engineer|developer|pm|product manager|manager|student|intern|scientist|analyst|sre|dba|architect|lead|researcher|consultant)\b|\bI'?m\s+(?:covering\s+)?on-?call\b|\bI'?m\s+covering\b/i;

/** The type of what a sentence says; for a secret with nothing else to type it by, the secret's. */
function kindOfSecretOr(text: string): MemoryKind {
  const kind = kindOf(text);
  return hasSecret(text) && (kind === "general" || kind === "project_fact") ? secretKind(text) : kind;
}

/** The type of a sentence whose point is a secret: credentials are configuration, a phone or ID number is about a person. */
function secretKind(sentence: string): MemoryKind {
  const kinds = new Set(findSecrets(sentence).map((s) => s.kind));
  if (kinds.has("phone") && ROLE.test(sentence)) return "person_role";
  if (kinds.has("phone") || kinds.has("id_number")) return "general";
  return "configuration";
}

const PERSON =
  /负责人|负责|值班|对接人|联系人|是我们(?:组|团队|部门)?的|(?:经理|主管|组长|架构师|DBA|运维|产品经理|owner|PM|leader|lead)\b|\bon-?call\b|\bin charge of\b|\bis (?:our|the) (?:\w+ ){0,2}(?:lead|manager|owner|dba|pm|architect|contact)\b|\bowns\b/i;
const PROJECT =
  /项目|服务|系统|数据库|库|集群|环境|生产|线上|测试环境|机房|上线|发布|版本|仓库|接口|域名|端口|截止|deadline|\b(?:project|service|system|database|db|cluster|prod|production|staging|deploy|release|repo|repository|endpoint|api|server|version|region)\b/i;

/** The type of what an explicit "remember" names. */
function kindOf(text: string): MemoryKind {
  if (COMMAND_START.test(text.replace(/^`|`$/g, ""))) return "command";
  if (CONFIG_LINE.test(text) || /\b[A-Za-z_][A-Za-z0-9_.]{1,63}=\S/.test(text)) return "configuration";
  if (PREFERENCE.test(text)) return "user_preference";
  if (DECISION.test(text)) return "decision";
  if (PERSON.test(text)) return "person_role";
  if (PROJECT.test(text)) return "project_fact";
  return "general";
}
