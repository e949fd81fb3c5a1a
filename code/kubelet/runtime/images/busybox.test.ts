import { describe, expect, it } from "vitest";
import { parseScript } from "./busybox.ts";
import { lookupImage, resolveExecutable } from "./catalog.ts";

describe("busybox sh", () => {
  it("splits a script into commands with quotes, variables, operators and redirection", () => {
    const env = { NAME: "web", EMPTY: "" };
    expect(
      parseScript(
        `touch /tmp/healthy; sleep 30 && echo "hi $NAME" 'no $NAME' > /tmp/out || echo \${NAME}x`,
        env,
      ),
    ).toEqual([
      { words: ["touch", "/tmp/healthy"], redirect: undefined, join: ";" },
      { words: ["sleep", "30"], redirect: undefined, join: "&&" },
      { words: ["echo", "hi web", "no $NAME"], redirect: { file: "/tmp/out", append: false }, join: "||" },
      { words: ["echo", "webx"], redirect: undefined, join: ";" },
    ]);
    expect(parseScript('echo "" $EMPTY >> f', env)).toEqual([
      { words: ["echo", ""], redirect: { file: "f", append: true }, join: ";" },
    ]);
  });
});

describe("catalog", () => {
  it("resolves an image's own program and the applets every image carries, by name or path", () => {
    const web = lookupImage("course/web:1.0");
    expect(web).toBeDefined();
    if (!web) return;
    expect(resolveExecutable(web, "web")).toEqual({ program: "web" });
    expect(resolveExecutable(web, "/bin/sh")).toEqual({ program: "busybox", argv0: "sh" });
    expect(resolveExecutable(web, "crasher")).toBeUndefined();
    expect(lookupImage("course/web:2.0")).toBeUndefined();
  });
});
