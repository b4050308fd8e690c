import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentHintSchema } from "../../../gen/contextloader/common/v1/errors_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb";
import type { CallContext } from "../../../src/core/call-context";
import type { KnowledgeNetworkBackend } from "../../../src/kn/backend";
import { FIND_SKILLS_TIMEOUT_MS, findSkills } from "../../../src/knowledge/kn-tools/find-skills/find-skills";
import { findSkillsInput } from "../../../src/knowledge/kn-tools/find-skills/input";
import { testContext } from "../../helpers/call-context";
import { failure } from "../../helpers/rpc";
import { failureOf } from "../../kn/backend.contract";
import { callFails, callOk, fieldsOf } from "../../mcp/mcp-client";
import { writeEdgeBundles } from "./schema-actions-bundles";
import {
  ACCOUNT,
  BACKENDS,
  type Harness,
  SAMPLE_BUNDLE,
  SEARCH_SCHEMA_RPC,
  startHarness,
} from "./schema-actions-harness";

/**
 * find_skills (the platform tool's §9): the skills bound to an object type or
 * to instances, or every skill, filtered and ranked by skill_query; the
 * skills type's contract checked; an empty answer explained. Through the
 * RPC, MCP and REST, on both backends, over the sample network and small
 * networks for the edge cases.
 */

const KN = "kn_medical";
const ids = (entries: { skillId?: string; skill_id?: string }[]) => entries.map((e) => e.skillId ?? e.skill_id);

/** Bound to every disease (treatment plan), to the named ones (the emergency one), to each system's (triage). */
const UPPER_AIRWAY = [{ disease_id: "disease_004790" }];

describe.each(BACKENDS)("find_skills over the %s backend", (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kind, {}, [SAMPLE_BUNDLE, ...writeEdgeBundles()]);
  });
  afterAll(() => h.close());
  /** The RPC for a caller that asks for Chinese: the platform tool's words. */
  const zh = () => h.rpcWith({ ...ACCOUNT, "accept-language": "zh" });

  describe("the RPC", () => {
    it("finds the skills bound to an object type's instances, by skill_id, at most top_k (10 by default)", async () => {
      const res = await h.rpc.findSkills({ knId: KN, objectTypeId: "disease" });
      expect(res.message).toBe("");
      expect(ids(res.entries)).toEqual([
        "skill_airway_emergency",
        "skill_chronic_followup",
        "skill_treatment_plan",
        "skill_triage_blood",
        "skill_triage_cardio",
        "skill_triage_digest",
        "skill_triage_endo",
        "skill_triage_ent",
        "skill_triage_eye",
        "skill_triage_infect",
      ]);
      expect(res.entries[0]).toMatchObject({
        name: "急症现场急救指引",
        description: expect.stringContaining("海姆立克法"),
      });
      // Skills bound to nothing are not an object type's.
      expect(ids(res.entries)).not.toContain("skill_drug_interaction");
    });

    it("finds only the skills bound to the given instances", async () => {
      const res = await h.rpc.findSkills({ knId: KN, objectTypeId: "disease", instanceIdentities: UPPER_AIRWAY });
      expect(ids(res.entries)).toEqual(["skill_airway_emergency", "skill_treatment_plan", "skill_triage_resp"]);
      const departments = await h.rpc.findSkills({
        knId: KN,
        objectTypeId: "department",
        instanceIdentities: [{ department_id: "department_000002" }],
      });
      expect(ids(departments.entries)).toEqual(["skill_airway_emergency", "skill_triage_resp"]);
    });

    it("ranks by skill_query first, then by skill_id, keeping only the skills that fit it", async () => {
      // knn takes the top_k nearest skills (the platform tool's k) however far they are: of 急救's three, only
      // the emergency skill clears the relevance floor, in either scope.
      const res = await h.rpc.findSkills({ knId: KN, objectTypeId: "disease", skillQuery: "急救", topK: 3 });
      expect(ids(res.entries)).toEqual(["skill_airway_emergency"]);
      const network = await h.rpc.findSkills({ knId: KN, objectTypeId: "skills", skillQuery: "急救", topK: 3 });
      expect(ids(network.entries)).toEqual(["skill_airway_emergency"]);
      const followup = await h.rpc.findSkills({ knId: KN, objectTypeId: "disease", skillQuery: "慢性病随访", topK: 1 });
      expect(ids(followup.entries)).toEqual(["skill_chronic_followup"]);
      // More skills fit than top_k: the best top_k come back.
      const triage = await h.rpc.findSkills({ knId: KN, objectTypeId: "skills", skillQuery: "问诊分诊", topK: 5 });
      expect(ids(triage.entries)).toHaveLength(5);
      for (const id of ids(triage.entries)) expect(id).toMatch(/^skill_triage_/);
    });

    it("returns no skill for a skill_query nothing fits, saying why and what to try (skill_query_no_match)", async () => {
      for (const objectTypeId of ["disease", "skills"]) {
        const res = await zh().findSkills({ knId: KN, objectTypeId, skillQuery: "股票行情分析" });
        expect(res.entries).toEqual([]);
        expect(res.message).toBe(
          "范围内有可用技能，但没有与「股票行情分析」相关的。请换用技能名称或用途中的词重试，或去掉 skill_query 查看全部可用技能。",
        );
        // In English for a caller that asks for no language (the test server's default).
        const en = await h.rpc.findSkills({ knId: KN, objectTypeId, skillQuery: "股票行情分析" });
        expect(en.message).toBe(
          'There are skills in scope, but none related to "股票行情分析". Try again with words from a skill\'s name or purpose, or leave skill_query out to see every available skill.',
        );
      }
      const withInstances = await zh().findSkills({
        knId: KN,
        objectTypeId: "disease",
        instanceIdentities: UPPER_AIRWAY,
        skillQuery: "asdfgh",
      });
      expect(withInstances.entries).toEqual([]);
      expect(withInstances.message).toContain("「asdfgh」");
    });

    it("says an unknown network does not exist (KNOWLEDGE_NETWORK_NOT_FOUND naming the networks), not that it has no skills", async () => {
      for (const objectTypeId of ["disease", "skills"]) {
        const err = await failure(h.rpc.findSkills({ knId: "kn_nope", objectTypeId }));
        expect(err.code).toBe(Code.NotFound);
        expect(err.rawMessage).toBe("knowledge network kn_nope does not exist");
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("KNOWLEDGE_NETWORK_NOT_FOUND");
        expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(["kn_id"]);
        const hint = err.findDetails(AgentHintSchema)[0]!;
        expect(hint.message).not.toContain("calling again will not change that");
        expect(hint.validValues).toContain(KN);
        // The same answer as query_object_instance gives.
        const other = await failure(h.rpc.queryObjectInstances({ knId: "kn_nope", otId: "disease" }));
        expect(err.rawMessage).toBe(other.rawMessage);
        expect(hint.validValues).toEqual(other.findDetails(AgentHintSchema)[0]?.validValues);
      }
    });

    it('searches every skill with object_type_id "skills", bound or not', async () => {
      const res = await h.rpc.findSkills({ knId: KN, objectTypeId: "skills", skillQuery: "药物相互作用", topK: 3 });
      expect(ids(res.entries)[0]).toBe("skill_drug_interaction");
      const all = await h.rpc.findSkills({ knId: KN, objectTypeId: "skills", topK: 20 });
      expect(all.entries).toHaveLength(20);
      const some = await h.rpc.findSkills({
        knId: KN,
        objectTypeId: "skills",
        instanceIdentities: [{ skill_id: "skill_report_reading" }],
      });
      expect(ids(some.entries)).toEqual(["skill_report_reading"]);
    });

    it("says the object type has no skill binding (object_type_no_binding)", async () => {
      const res = await zh().findSkills({ knId: KN, objectTypeId: "company" });
      expect(res.entries).toEqual([]);
      expect(res.message).toContain("药物生厂商（company）");
      expect(res.message).toContain("没有任何关系类型");
      expect(res.message).toContain("object_type_id 设为 skills");
    });

    it("says the instances have no skill (instance_no_match) and the query matched none (skill_query_no_match)", async () => {
      const noneBound = await zh().findSkills({
        knId: KN,
        objectTypeId: "disease",
        instanceIdentities: [{ disease_id: "disease_999999" }],
      });
      expect(noneBound.entries).toEqual([]);
      expect(noneBound.message).toContain("给定的实例没有绑定任何技能");
      expect(noneBound.message).toContain("instance_identities");
      const noMatch = await zh().findSkills({
        knId: KN,
        objectTypeId: "disease",
        instanceIdentities: UPPER_AIRWAY,
        skillQuery: "药物相互作用",
        topK: 1,
      });
      expect(noMatch.entries).toEqual([]);
      expect(noMatch.message).toContain("「药物相互作用」");
      expect(noMatch.message).toContain("去掉 skill_query");
    });

    it("says no instance of the type is bound (object_type_no_match)", async () => {
      const res = await zh().findSkills({ knId: "kn_edge", objectTypeId: "ward" });
      expect(res.entries).toEqual([]);
      expect(res.message).toContain("病房（ward） 的实例都没有绑定技能");
    });

    it("checks the skills contract: a network without skills, or skills without name", async () => {
      const none = await failure(h.rpc.findSkills({ knId: "kn_no_skills", objectTypeId: "ward" }));
      expect(none.code).toBe(Code.NotFound);
      expect(none.rawMessage).toContain("skills object type not found in current knowledge network");
      expect(none.findDetails(ErrorInfoSchema)[0]).toMatchObject({
        reason: "SKILLS_TYPE_NOT_FOUND",
        metadata: expect.objectContaining({ kn_id: "kn_no_skills", skills_object_type_id: "skills" }),
      });
      const incomplete = await failure(h.rpc.findSkills({ knId: "kn_bad_skills", objectTypeId: "ward" }));
      expect(incomplete.code).toBe(Code.FailedPrecondition);
      expect(incomplete.rawMessage).toContain("lacks the data properties name");
      expect(incomplete.findDetails(ErrorInfoSchema)[0]?.metadata).toMatchObject({ missing_data_properties: "name" });
    });

    it("refuses a skill_query the skills type cannot be searched by, and returns skills without description", async () => {
      const err = await failure(h.rpc.findSkills({ knId: "kn_edge", objectTypeId: "skills", skillQuery: "查房" }));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("without skill_query");
      const all = await h.rpc.findSkills({ knId: "kn_edge", objectTypeId: "skills" });
      expect(all.entries).toEqual([
        expect.objectContaining({ skillId: "s1", name: "查房记录", description: "" }),
        expect.objectContaining({ skillId: "s2", name: "交班", description: "" }),
      ]);
    });

    it("refuses an unknown object type (pointing at search_schema), a missing one, top_k out of 1..20 and identities without keys", async () => {
      const unknown = await failure(h.rpc.findSkills({ knId: KN, objectTypeId: "planet" }));
      expect(unknown.code).toBe(Code.NotFound);
      expect(unknown.findDetails(AgentHintSchema)[0]?.nextRpc).toBe(SEARCH_SCHEMA_RPC);
      const invalid = await failure(h.rpc.findSkills({ knId: KN, topK: 21 }));
      expect(invalid.code).toBe(Code.InvalidArgument);
      expect(
        invalid
          .findDetails(BadRequestSchema)[0]
          ?.fieldViolations.map((v) => v.field)
          .sort(),
      ).toEqual(["object_type_id", "top_k"]);
      expect((await failure(h.rpc.findSkills({ knId: KN, objectTypeId: "disease", topK: 0 }))).code).toBe(
        Code.InvalidArgument,
      );
      const keyless = await failure(
        h.rpc.findSkills({ knId: KN, objectTypeId: "disease", instanceIdentities: [{ disease_name: "肺炎" }] }),
      );
      expect(keyless.code).toBe(Code.InvalidArgument);
      expect(keyless.findDetails(BadRequestSchema)[0]?.fieldViolations[0]).toMatchObject({
        field: "instance_identities[0]",
        description: expect.stringContaining("missing primary key disease_id"),
      });
    });

    it("takes kn_id from x-kn-id, and writes the compact answer with output_format", async () => {
      const res = await h.rpcWith({ ...ACCOUNT, "x-kn-id": KN }).findSkills({
        objectTypeId: "disease",
        instanceIdentities: UPPER_AIRWAY,
        outputFormat: "json",
      });
      expect(res.entries).toEqual([]);
      expect(JSON.parse(res.text)).toEqual({
        scope: "instance",
        skills: [
          expect.objectContaining({ skill_id: "skill_airway_emergency", name: "急症现场急救指引" }),
          expect.objectContaining({ skill_id: "skill_treatment_plan" }),
          expect.objectContaining({ skill_id: "skill_triage_resp" }),
        ],
      });
    });
  });

  describe("the MCP tool", () => {
    it("answers the skills as a table, and the message when there is none", async () => {
      const { tools } = await h.mcp.listTools();
      const tool = tools.find((t) => t.name === "find_skills")!;
      expect(tool.inputSchema.required).toEqual(["object_type_id"]);
      expect(tool.inputSchema.properties!["top_k"]).toMatchObject({ minimum: 1, maximum: 20, default: 10 });
      const answer = await callOk(h.mcp, "find_skills", {
        kn_id: KN,
        object_type_id: "disease",
        instance_identities: UPPER_AIRWAY,
      });
      expect(answer).toMatchObject({ scope: "instance" });
      expect((answer["skills"] as { skill_id: string }[]).map((s) => s.skill_id)).toEqual([
        "skill_airway_emergency",
        "skill_treatment_plan",
        "skill_triage_resp",
      ]);
      const empty = await callOk(h.mcp, "find_skills", { kn_id: KN, object_type_id: "company" });
      expect(empty["skills"]).toBeUndefined();
      expect(empty["message"]).toContain("No relation type links object type 药物生厂商 (company)");
    });

    it("fails naming the argument, or the contract's missing part", async () => {
      const bad = await callFails(h.mcp, "find_skills", { kn_id: KN, object_type_id: "disease", top_k: 50 });
      expect(fieldsOf(bad)).toEqual(["top_k"]);
      const contract = await callFails(h.mcp, "find_skills", { kn_id: "kn_bad_skills", object_type_id: "ward" });
      expect(contract).toMatchObject({ code: "FAILED_PRECONDITION", reason: "SKILLS_CONTRACT_INCOMPLETE" });
    });

    it("says an unknown network does not exist, and answers no skill with the message when nothing fits skill_query", async () => {
      const unknown = await callFails(h.mcp, "find_skills", { kn_id: "kn_nope", object_type_id: "disease" });
      expect(unknown).toMatchObject({ code: "NOT_FOUND", reason: "KNOWLEDGE_NETWORK_NOT_FOUND" });
      expect(fieldsOf(unknown)).toEqual(["kn_id"]);
      expect(unknown.valid_values).toContain(KN);
      const none = await callOk(h.mcp, "find_skills", {
        kn_id: KN,
        object_type_id: "skills",
        skill_query: "红烧肉怎么做",
      });
      expect(none["skills"]).toBeUndefined();
      expect(none["message"]).toContain('none related to "红烧肉怎么做"');
    });
  });

  describe("the REST route", () => {
    it("takes the platform's body (instance_identities without underscore) and answers {entries, message}", async () => {
      const res = await h.rest("find_skills", {
        kn_id: KN,
        object_type_id: "disease",
        instance_identities: UPPER_AIRWAY,
        top_k: 2,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        entries: [
          { skill_id: "skill_airway_emergency", name: "急症现场急救指引", description: expect.any(String) },
          { skill_id: "skill_treatment_plan", name: "治疗方案生成", description: expect.any(String) },
        ],
      });
      const empty = await h.rest("find_skills", { kn_id: KN, object_type_id: "company" });
      expect(empty.body).toEqual({ entries: [], message: expect.stringContaining("No relation type links") });
    });

    it("reports errors in the platform's envelope", async () => {
      const missing = await h.rest("find_skills", { kn_id: KN });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe("INVALID_ARGUMENT");
      expect(missing.body.description).toContain("object_type_id: required");
      const contract = await h.rest("find_skills", { kn_id: "kn_no_skills", object_type_id: "ward" });
      expect(contract.status).toBe(404);
      expect(contract.body).toMatchObject({ code: "SKILLS_TYPE_NOT_FOUND", link: "" });
      const underscored = await h.rest("find_skills", {
        kn_id: KN,
        object_type_id: "disease",
        _instance_identities: UPPER_AIRWAY,
      });
      expect(underscored.status).toBe(400);
      expect(underscored.body.details.field_violations[0].field).toBe("_instance_identities");
      const unknown = await h.rest("find_skills", { kn_id: "kn_nope", object_type_id: "disease" });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: "KNOWLEDGE_NETWORK_NOT_FOUND" });
      expect(unknown.body.details.valid_values).toContain(KN);
    });

    it("answers no entry and the message for a skill_query nothing fits", async () => {
      const res = await h.rest("find_skills", {
        kn_id: KN,
        object_type_id: "disease",
        skill_query: "季度财务报表审计",
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ entries: [], message: expect.stringContaining('none related to "季度财务报表审计"') });
    });
  });
});

describe("find_skills' 10 s budget", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("abandons a platform that does not answer, and fails DEADLINE_EXCEEDED saying how to narrow the call", async () => {
    vi.useFakeTimers();
    let abandoned = false;
    // A platform that never answers: each call settles only when the call's signal aborts.
    const hanging = (ctx: CallContext) =>
      new Promise<never>((_, reject) =>
        ctx.signal.addEventListener("abort", () => {
          abandoned = true;
          reject(ctx.signal.reason);
        }),
      );
    const backend = { getObjectTypes: hanging } as unknown as KnowledgeNetworkBackend;
    const call = failureOf(
      findSkills({ backend }, testContext(), findSkillsInput.parse({ kn_id: KN, object_type_id: "disease" })),
    );
    await vi.advanceTimersByTimeAsync(FIND_SKILLS_TIMEOUT_MS - 1);
    expect(abandoned).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await call;
    expect(abandoned).toBe(true);
    expect(err).toMatchObject({ code: "deadline_exceeded", reason: "FIND_SKILLS_TIMEOUT" });
    expect(err.hint?.message.en).toContain("skill_query");
  });
});
