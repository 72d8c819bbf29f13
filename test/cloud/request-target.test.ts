// The request options of http.ts's origin cache are those of full URL parsing, for every URL:
// the paths the client builds (taken verbatim) and tricky ones (dot segments, encodings,
// backslashes, credentials, IPv6, fragments) that must fall back to parsing.
import { urlToHttpOptions } from "node:url";
import { describe, expect, it } from "vitest";
import { TargetCache } from "../../src/cloud/request-target.js";

const parsed = (url: string) => ({ ...urlToHttpOptions(new URL(url)) });

const ORIGINS = [
  "http://127.0.0.1:8085",
  "https://gkebackup.googleapis.com",
  "http://u:p%40w@[::1]:9000",
  "HTTP://Example.COM:80",
  "https://us-central1-aiplatform.googleapis.com",
  "http://h:1/prefix",
];
const PATHS = [
  "/v1/projects/p/locations/us-central1/restorePlans/rp-00001:getIamPolicy?options.requestedPolicyVersion=3",
  "/v1beta1/projects/123/locations/l/endpoints/e:setIamPolicy",
  "/v1alpha/projects/p/locations/l/federations/f",
  "/a/./b",
  "/a/../b",
  "/a/%2e%2E/b",
  "/a/.",
  "/a?",
  "/a?b#c",
  "/a b",
  "/a\\b",
  "/a?x='y'",
  "/ä",
  "/a?q=/./x",
  "/%zz/%41",
  "/a//b",
  "/a?x=1?y=2",
];
const ALPHABET = [
  "a",
  "Z",
  "0",
  "-",
  ".",
  "_",
  "~",
  "/",
  "%",
  "2",
  "e",
  "E",
  "?",
  "#",
  ":",
  "@",
  "=",
  "&",
  " ",
  "\\",
  "'",
  '"',
  "é",
  "+",
  ";",
  ",",
];

function randomPath(random: () => number): string {
  let p = "/";
  const n = Math.floor(random() * 24);
  for (let i = 0; i < n; i++) p += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return p;
}

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("TargetCache", () => {
  it("gives the options of urlToHttpOptions(new URL(url)) for the client's paths and tricky ones", () => {
    const cache = new TargetCache();
    for (const origin of ORIGINS) {
      for (const path of PATHS) {
        const url = origin + path;
        const got = cache.resolve(url);
        expect({ ...got.options }, url).toEqual(parsed(url));
        expect(got.target.protocol).toBe(new URL(url).protocol);
        expect(got.target.host).toBe(new URL(url).host);
      }
    }
  });

  it("agrees with URL parsing on random paths", () => {
    const random = mulberry(20);
    const cache = new TargetCache();
    for (let i = 0; i < 5000; i++) {
      const url = ORIGINS[i % ORIGINS.length]! + randomPath(random);
      let want: unknown;
      try {
        want = parsed(url);
      } catch {
        expect(() => cache.resolve(url)).toThrow();
        continue;
      }
      expect({ ...cache.resolve(url).options }, url).toEqual(want);
    }
  });

  it("the client's URLs take the fast path: one parsed origin, shared", () => {
    const cache = new TargetCache();
    const a = cache.resolve(ORIGINS[0]! + PATHS[0]!);
    const b = cache.resolve(ORIGINS[0]! + PATHS[1]!);
    expect(a.target).toBe(b.target);
  });

  it("an origin it cannot separate plainly is parsed whole", () => {
    const cache = new TargetCache();
    for (const url of ["http://h\\x/y", "http://h?x/y", "http://h#x/y", "http://h", "http://h:1"])
      expect({ ...cache.resolve(url).options }).toEqual(parsed(url));
  });
});
