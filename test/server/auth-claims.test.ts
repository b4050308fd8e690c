import { describe, expect, it } from "vitest";
import { callerFromClaims } from "../../src/server/auth/claims";

/** How a verified token's claims become the caller (AUTH_*_CLAIM). */

const DEFAULT = { accountId: "sub", accountType: undefined, scopes: "scope" };

describe("callerFromClaims", () => {
  it("takes sub as the account, a user, with the well-formed scopes of a space-separated scope claim (URL scopes left out)", () => {
    expect(callerFromClaims({ sub: " u-1 ", scope: "openid memories:sensitive https://x.test/read" }, DEFAULT)).toEqual(
      {
        accountId: "u-1",
        accountType: "user",
        scopes: ["openid", "memories:sensitive"],
      },
    );
    expect(callerFromClaims({ sub: "u-1" }, DEFAULT)).toEqual({ accountId: "u-1", accountType: "user" });
  });

  it("reads scopes from an array claim and the type from a dotted path, mapping the platform's visitor types", () => {
    const mapping = { accountId: "uid", accountType: "ext.visitor_type", scopes: "scp" };
    expect(
      callerFromClaims({ uid: "a-1", ext: { visitor_type: "business" }, scp: ["memories:sensitive", 7] }, mapping),
    ).toEqual({
      accountId: "a-1",
      accountType: "app",
      scopes: ["memories:sensitive"],
    });
    expect(callerFromClaims({ uid: "a-1", ext: { visitor_type: "realname" } }, mapping)).toMatchObject({
      accountType: "user",
    });
    expect(callerFromClaims({ uid: "a-1", ext: { visitor_type: "anonymous" } }, mapping)).toMatchObject({
      accountType: "anonymous",
    });
    // A claim whose own name has dots is read by that name first.
    expect(
      callerFromClaims({ "https://idp.test/uid": "a-2" }, { ...mapping, accountId: "https://idp.test/uid" }),
    ).toMatchObject({
      accountId: "a-2",
    });
  });

  it("refuses claims that name no usable account or type, saying which claim", () => {
    // Refusals are the words, in both languages.
    const why = (claims: Record<string, unknown>, mapping: Parameters<typeof callerFromClaims>[1] = DEFAULT) => {
      const result = callerFromClaims(claims, mapping);
      if ("accountId" in result) throw new Error("accepted");
      return result;
    };
    expect(why({})).toEqual({
      en: 'it carries no "sub" claim naming the account',
      zh: '它没有指明账号的 "sub" 声明',
    });
    expect(why({ sub: 42 }).en).toBe('it carries no "sub" claim naming the account');
    expect(why({ sub: "x".repeat(300) }).en).toMatch(/"sub" claim is not an account id/);
    expect(why({ sub: "a\u0000b" }).en).toMatch(/"sub" claim is not an account id/);
    expect(why({ sub: "u", typ: "robot" }, { ...DEFAULT, accountType: "typ" }).en).toMatch(
      /"typ" claim is not an account type/,
    );
    // Prototype keys are not claims.
    expect(callerFromClaims({ sub: "u" }, { ...DEFAULT, accountType: "constructor.name" })).toMatchObject({
      accountType: "user",
    });
  });
});
