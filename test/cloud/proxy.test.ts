import { describe, expect, it } from "vitest";
import { exempt, proxyFor } from "../../src/cloud/proxy.js";

const at = (url: string, env: NodeJS.ProcessEnv) => proxyFor(new URL(url), env)?.display;

describe("proxy from the environment", () => {
  it("HTTPS_PROXY for https, HTTP_PROXY for http, either case, scheme optional", () => {
    const env = { HTTPS_PROXY: "http://proxy.corp:3128", http_proxy: "plain.corp:8080" };
    expect(at("https://gkebackup.googleapis.com/v1/x", env)).toBe("http://proxy.corp:3128");
    expect(at("http://emulator.corp:8790/v1/x", env)).toBe("http://plain.corp:8080");
    expect(at("https://gkebackup.googleapis.com/v1/x", { https_proxy: "https://secure.corp" })).toBe(
      "https://secure.corp",
    );
    expect(at("https://gkebackup.googleapis.com/v1/x", {})).toBeUndefined();
    expect(at("https://gkebackup.googleapis.com/v1/x", { HTTPS_PROXY: "  " })).toBeUndefined();
  });

  it("never for loopback addresses", () => {
    const env = { HTTPS_PROXY: "http://proxy.corp:3128", HTTP_PROXY: "http://proxy.corp:3128" };
    for (const u of [
      "http://127.0.0.1:8790/",
      "http://127.4.5.6/",
      "http://localhost:1/",
      "http://api.localhost/",
      "http://[::1]:8790/",
      "https://localhost/",
    ]) {
      expect(at(u, env), u).toBeUndefined();
    }
  });

  it("keeps the credentials for the agent but out of the display", () => {
    const p = proxyFor(new URL("https://gkebackup.googleapis.com/"), {
      HTTPS_PROXY: "http://alice:s3cret@proxy.corp:3128",
    })!;
    expect(p.display).toBe("http://proxy.corp:3128");
    expect(p.url.username).toBe("alice");
    expect(p.url.password).toBe("s3cret");
  });

  it("a malformed proxy is an error that does not echo its value", () => {
    expect(() => proxyFor(new URL("https://x.googleapis.com/"), { HTTPS_PROXY: "http://bob:pw@[bad" })).toThrow(
      /^HTTPS_PROXY is not a valid URL$/,
    );
    expect(() => proxyFor(new URL("https://x.googleapis.com/"), { HTTPS_PROXY: "socks5://proxy:1080" })).toThrow(
      /must be an http:\/\/ or https:\/\/ URL, not socks5:/,
    );
  });

  it("NO_PROXY: names with their subdomains, leading dots, ports, IPs, CIDR blocks and *", () => {
    const cases: [string, string, string, boolean][] = [
      ["googleapis.com", "gkebackup.googleapis.com", "443", true],
      ["googleapis.com", "googleapis.com", "443", true],
      ["googleapis.com", "notgoogleapis.com", "443", false],
      [".googleapis.com", "googleapis.com", "443", false],
      [".googleapis.com", "a.googleapis.com", "443", true],
      ["*.googleapis.com", "a.googleapis.com", "443", true],
      ["internal.corp:8790", "internal.corp", "8790", true],
      ["internal.corp:8790", "internal.corp", "443", false],
      ["10.0.0.0/8", "10.1.2.3", "80", true],
      ["10.0.0.0/8", "11.1.2.3", "80", false],
      ["fd00::/8", "fd12::1", "80", true],
      ["192.168.1.5", "192.168.1.5", "80", true],
      ["[2001:db8::1]:8790", "2001:db8::1", "8790", true],
      ["2001:db8::1", "2001:db8::1", "8790", true],
      ["example.com, *", "anything.else", "443", true],
      [" Example.COM ", "api.example.com", "443", true],
      ["example.com", "api.example.com.", "443", true],
      ["", "api.example.com", "443", false],
    ];
    for (const [list, host, port, want] of cases)
      expect(exempt(list, host, port), `${list} ∋ ${host}:${port}`).toBe(want);
    expect(
      at("https://gkebackup.googleapis.com/", { HTTPS_PROXY: "http://p:1", no_proxy: "googleapis.com" }),
    ).toBeUndefined();
  });
});
