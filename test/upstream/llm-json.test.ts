import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors/tool-error";
import { type ChatMessage, LlmClient } from "../../src/upstream/llm-client";
import { askJson, type Reading, readJsonObject } from "../../src/upstream/llm-json";
import { testContext } from "../helpers/call-context";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";

describe("reading the JSON object an LLM wrote", () => {
  it.each([
    ["a bare object", '{"a":1}', { a: 1 }, false],
    ["a ```json fence", 'Here you go:\n```json\n{"a": [1, 2]}\n```', { a: [1, 2] }, false],
    ["a fence without a language", '```\n{"a":1}\n```', { a: 1 }, false],
    ["a fence after an example, which loses", 'For example {"a":0}. Answer:\n```json\n{"a":1}\n```', { a: 1 }, false],
    ["chatter around the object", 'Sure! {"a": 1} Hope this helps.', { a: 1 }, false],
    ["braces in chatter before the object", 'I think {not json} so {"a":1} done', { a: 1 }, false],
    ["braces inside strings", '{"a": "}{", "b": "\\"}"}', { a: "}{", b: '"}' }, false],
    ["the first of two objects", '{"a":1} {"b":2}', { a: 1 }, false],
    ["single quotes and a trailing comma, repaired", "{'a': 1, 'b': 'x',}", { a: 1, b: "x" }, true],
    ["a comment, repaired", '{"a": 1, // note\n "b": 2}', { a: 1, b: 2 }, true],
    ["unquoted keys, repaired", "{a: 1}", { a: 1 }, true],
    ["an answer cut off mid-way, closed", '{"a": {"b": [1, 2', { a: { b: [1, 2] } }, true],
  ])("reads %s", (_what, text, value, repaired) => {
    expect(readJsonObject(text)).toEqual({ ok: true, value, repaired });
  });

  it.each([
    ["no object", "sorry, I cannot", "the answer contains no JSON object"],
    ["an empty answer", "", "the answer contains no JSON object"],
    ["JSON null", "null", "the answer contains no JSON object"],
    ["an array", "[1, 2]", "the answer is a JSON array; a JSON object was asked for"],
    ["an array in a fence", "```json\n[1]\n```", "the answer is a JSON array; a JSON object was asked for"],
    ["an object past repair", '{"a": 1 @@@ }', "the answer is not valid JSON: Colon expected at position 12"],
  ])("refuses %s and says why", (_what, text, problem) => {
    expect(readJsonObject(text)).toEqual({ ok: false, problem });
  });
});

describe("askJson: an answer, and repair rounds until it can be used", () => {
  let llm: ScriptedLlm;
  beforeAll(async () => {
    llm = await startScriptedLlm();
  });
  afterAll(() => llm.close());

  const client = () => new LlmClient({ baseUrl: llm.baseUrl, apiKey: undefined, model: "test-model", timeoutMs: 2000 });
  const question: ChatMessage[] = [
    { role: "system", content: 'Answer {"n": <a number>}.' },
    { role: "user", content: "How many?" },
  ];
  /** Usable when the object has a number `n`. */
  const readN = (answer: string): Reading<number> => {
    const read = readJsonObject(answer);
    if (!read.ok) return read;
    return typeof read.value["n"] === "number"
      ? { ok: true, value: read.value["n"] }
      : { ok: false, problem: '"n" must be a number' };
  };
  const repairMessage = (problem: string) => `That answer cannot be used: ${problem}. Again.`;
  const chars = (messages: { content: string }[]) => messages.reduce((n, m) => n + m.content.length, 0);

  it("returns an answer that is good at once, after one call asking for a JSON object", async () => {
    llm.queue({ content: '{"n": 3}' });
    const before = llm.requests.length;
    const asked = await askJson(client(), testContext(), question, readN, { repairs: 2, repairMessage });
    expect(asked).toEqual({ ok: true, value: 3, answers: ['{"n": 3}'], repairs: 0, promptChars: chars(question) });
    const sent = llm.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.messages).toEqual(question);
    expect(sent[0]!.response_format).toEqual({ type: "json_object" });
  });

  it("sends an unusable answer back with the reader's problem, and returns the repaired one", async () => {
    llm.queue({ content: '{"n": "three"}' }, { content: '```json\n{"n": 3}\n```' });
    const before = llm.requests.length;
    const asked = await askJson(client(), testContext(), question, readN, { repairs: 1, repairMessage });
    expect(asked).toMatchObject({
      ok: true,
      value: 3,
      answers: ['{"n": "three"}', '```json\n{"n": 3}\n```'],
      repairs: 1,
    });
    const [first, repair] = llm.requests.slice(before);
    expect(repair!.messages).toEqual([
      ...question,
      { role: "assistant", content: '{"n": "three"}' },
      { role: "user", content: 'That answer cannot be used: "n" must be a number. Again.' },
    ]);
    expect(asked.promptChars).toBe(chars(first!.messages) + chars(repair!.messages));
  });

  it("stops after the repair rounds it was given and returns the last problem; the caller's messages are untouched", async () => {
    llm.queue({ content: "no" }, { content: "[1]" }, { content: '{"n": null}' });
    const before = llm.requests.length;
    const messages = [...question];
    const asked = await askJson(client(), testContext(), messages, readN, { repairs: 2, repairMessage });
    expect(asked).toMatchObject({
      ok: false,
      problem: '"n" must be a number',
      answers: ["no", "[1]", '{"n": null}'],
      repairs: 2,
    });
    const sent = llm.requests.slice(before);
    expect(sent).toHaveLength(3);
    expect(sent[2]!.messages.at(-1)!.content).toBe(
      "That answer cannot be used: the answer is a JSON array; a JSON object was asked for. Again.",
    );
    expect(messages).toEqual(question);
  });

  it("makes no repair round when given none", async () => {
    llm.queue({ content: "no" });
    const before = llm.requests.length;
    const asked = await askJson(client(), testContext(), question, readN, { repairs: 0, repairMessage });
    expect(asked).toMatchObject({
      ok: false,
      problem: "the answer contains no JSON object",
      answers: ["no"],
      repairs: 0,
    });
    expect(llm.requests.length - before).toBe(1);
  });

  it("throws the LLM's own failure as the client threw it", async () => {
    llm.queue({ status: 401, body: '{"error":"bad key"}' });
    const err = await askJson(client(), testContext(), question, readN, { repairs: 1, repairMessage }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: "failed_precondition", reason: "LLM_REJECTED" });
  });
});
