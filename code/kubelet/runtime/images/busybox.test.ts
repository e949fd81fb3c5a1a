import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
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

  it("gives `sh -c script a b` its positional parameters: $0 is a, $1 is b, $# their count", () => {
    // "$20" is $2 followed by "0", as POSIX sh reads one digit; ${10} would be the tenth.
    expect(parseScript(`echo $0 "$1" $2 $# $20 \${3}`, {}, ["name", "a b", "c"])[0].words).toEqual([
      "echo",
      "name",
      "a b",
      "c",
      "2",
      "c0",
    ]);
    // Without operands $0 is the shell's name and there are no parameters.
    expect(parseScript("echo $0 $# $1", { "1": "not an env var" })[0].words).toEqual(["echo", "sh", "0"]);
  });

  it("runs `sh -c 'echo $0 $1 $#' x y` as a process and prints x y 1, as a pod's shell would", () => {
    const out = execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        fileURLToPath(new URL("./busybox.ts", import.meta.url)),
        "sh",
        "-c",
        "echo $0 $1 $#",
        "x",
        "y",
      ],
      { encoding: "utf8" },
    );
    expect(out).toBe("x y 1\n");
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
