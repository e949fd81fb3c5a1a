/**
 * busybox — the small tools every catalog image carries, for `kubectl exec` and exec probes:
 * sh (a tiny subset), cat, touch, rm, ls, mkdir, echo, sleep, env, date, hostname, true, false.
 * No upstream counterpart as code: busybox is the multi-call binary upstream's examples use.
 *
 * Solves:
 * - upstream's exec-probe example runs `sh -c "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"`
 *   and probes with `cat /tmp/healthy`; those commands must work, and work on *this* container's
 *   files: every path goes through `containerPath`, so /tmp/healthy is the container's own.
 * - one bundle for all applets, chosen by the first argument, as busybox picks by argv[0].
 *
 * The shell: words with '…' and "…" quoting and `$VAR`/`${VAR}` expansion, `sh -c script a b`'s
 * positional parameters (`$0` is `a`, `$1` is `b`, `$#` their count, as POSIX sh), commands joined by
 * `;`, `&&`, `||` or newlines, `> file` / `>> file` redirection, `exit [n]`; without `-c` it
 * reads commands from stdin. No pipes, globs, variables assignment or control flow.
 * A command that is not an applet fails as a shell says it: `sh: foo: not found`, exit 127.
 *
 * @upstream none — busybox's applets (https://busybox.net/downloads/BusyBox.html)
 * @chapter 07-kubelet
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { containerPath } from "./container-root.ts";

/** Where an applet writes: the process's streams, or a file after `>`. */
interface IO {
  out(s: string): void;
  err(s: string): void;
}

type Applet = (args: string[], io: IO) => Promise<number> | number;

const processIO: IO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
};

export const applets: Record<string, Applet> = {
  cat: async (args, io) => {
    if (args.length === 0) {
      for await (const chunk of process.stdin) io.out(String(chunk));
      return 0;
    }
    let code = 0;
    for (const f of args) {
      try {
        io.out(readFileSync(containerPath(f), "utf8"));
      } catch {
        io.err(`cat: can't open '${f}': No such file or directory\n`);
        code = 1;
      }
    }
    return code;
  },
  touch: (args) => {
    const now = new Date();
    for (const f of args) {
      const p = containerPath(f);
      if (existsSync(p)) utimesSync(p, now, now);
      else writeFileSync(p, "");
    }
    return 0;
  },
  rm: (args, io) => {
    const force = args.some((a) => /^-[a-z]*f/.test(a));
    const recursive = args.some((a) => /^-[a-z]*r/i.test(a));
    let code = 0;
    for (const f of args.filter((a) => !a.startsWith("-"))) {
      if (!existsSync(containerPath(f))) {
        if (!force) {
          io.err(`rm: can't remove '${f}': No such file or directory\n`);
          code = 1;
        }
        continue;
      }
      rmSync(containerPath(f), { recursive, force });
    }
    return code;
  },
  mkdir: (args) => {
    const parents = args.includes("-p");
    for (const d of args.filter((a) => !a.startsWith("-")))
      mkdirSync(containerPath(d), { recursive: parents });
    return 0;
  },
  ls: (args, io) => {
    const dirs = args.filter((a) => !a.startsWith("-"));
    let code = 0;
    for (const d of dirs.length ? dirs : ["."]) {
      const p = containerPath(d);
      if (!existsSync(p)) {
        io.err(`ls: ${d}: No such file or directory\n`);
        code = 1;
      } else if (statSync(p).isDirectory()) {
        for (const name of readdirSync(p).sort()) io.out(`${name}\n`);
      } else io.out(`${d}\n`);
    }
    return code;
  },
  echo: (args, io) => {
    const noNewline = args[0] === "-n";
    io.out((noNewline ? args.slice(1) : args).join(" ") + (noNewline ? "" : "\n"));
    return 0;
  },
  sleep: async (args) => {
    await sleep(Number(args[0] ?? 0) * 1000);
    return 0;
  },
  env: (_args, io) => {
    for (const [k, v] of Object.entries(process.env)) io.out(`${k}=${v}\n`);
    return 0;
  },
  date: (_args, io) => {
    io.out(`${new Date().toUTCString()}\n`);
    return 0;
  },
  hostname: (_args, io) => {
    io.out(`${process.env.HOSTNAME ?? ""}\n`);
    return 0;
  },
  true: () => 0,
  false: () => 1,
  sh: (args) => shell(args),
};

/** One parsed command: its words, an optional redirection, and how it joins the next one. */
interface Command {
  words: string[];
  redirect?: { file: string; append: boolean };
  join: ";" | "&&" | "||";
}

/**
 * Splits a script into commands (the tiny subset described in the header). `positional` is
 * `sh -c script name args…`'s operands after the script: `$0` is the first (the shell's name,
 * "sh", when there is none), `$1`… the rest, and `$#` how many of those rest there are.
 */
export function parseScript(
  script: string,
  env: NodeJS.ProcessEnv = process.env,
  positional: string[] = [],
): Command[] {
  const [zero = "sh", ...rest] = positional;
  const special: Record<string, string> = { "0": zero, "#": String(rest.length) };
  rest.forEach((arg, n) => {
    special[String(n + 1)] = arg;
  });
  const commands: Command[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let redirect: Command["redirect"];
  let pendingRedirect: boolean | undefined; // append?
  const endWord = () => {
    if (word === undefined) return;
    if (pendingRedirect !== undefined) {
      redirect = { file: word, append: pendingRedirect };
      pendingRedirect = undefined;
    } else words.push(word);
    word = undefined;
  };
  const endCommand = (join: Command["join"]) => {
    endWord();
    if (words.length) commands.push({ words, redirect, join });
    words = [];
    redirect = undefined;
  };
  const expand = (s: string, i: number): [string, number] => {
    // A digit after `$` is one positional parameter ("$10" is $1 then "0", as POSIX sh reads it).
    const m = /^\$(?:\{(\w+|#)\}|(\d|#|\?|\w+))/.exec(s.slice(i));
    if (!m) return ["$", i + 1];
    const name = m[1] ?? m[2];
    const value = /^\d+$/.test(name) || name === "#" ? special[name] : env[name];
    return [value ?? "", i + m[0].length];
  };
  let i = 0;
  while (i < script.length) {
    const c = script[i];
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      word = (word ?? "") + script.slice(i + 1, end < 0 ? undefined : end);
      i = end < 0 ? script.length : end + 1;
    } else if (c === '"') {
      word = word ?? "";
      i++;
      while (i < script.length && script[i] !== '"') {
        if (script[i] === "$") {
          const [v, next] = expand(script, i);
          word += v;
          i = next;
        } else if (script[i] === "\\" && i + 1 < script.length) {
          word += script[i + 1];
          i += 2;
        } else word += script[i++];
      }
      i++;
    } else if (c === "$") {
      // Unquoted, an empty variable is no word at all ("$EMPTY" is an empty word).
      const [v, next] = expand(script, i);
      if (v !== "") word = (word ?? "") + v;
      i = next;
    } else if (c === ";" || c === "\n") {
      endCommand(";");
      i++;
    } else if (script.startsWith("&&", i) || script.startsWith("||", i)) {
      endCommand(script.slice(i, i + 2) as "&&" | "||");
      i += 2;
    } else if (c === ">") {
      endWord();
      pendingRedirect = script[i + 1] === ">";
      i += pendingRedirect ? 2 : 1;
    } else if (c === " " || c === "\t") {
      endWord();
      i++;
    } else {
      word = (word ?? "") + c;
      i++;
    }
  }
  endCommand(";");
  return commands;
}

/** Runs the commands in order, honouring `&&`/`||`; the status is the last command's. */
async function runScript(script: string, positional: string[] = []): Promise<number> {
  let status = 0;
  let skip = false;
  for (const cmd of parseScript(script, process.env, positional)) {
    if (!skip) {
      const [name, ...args] = cmd.words;
      if (name === "exit") process.exit(args[0] === undefined ? status : Number(args[0]));
      const applet = applets[name.slice(name.lastIndexOf("/") + 1)];
      let io = processIO;
      if (cmd.redirect) {
        const file = containerPath(cmd.redirect.file);
        if (!cmd.redirect.append) writeFileSync(file, "");
        io = { out: (s) => appendFileSync(file, s), err: processIO.err };
      }
      if (!applet) {
        processIO.err(`sh: ${name}: not found\n`);
        status = 127;
      } else status = await applet(args, io);
    }
    skip = (cmd.join === "&&" && status !== 0) || (cmd.join === "||" && status === 0);
  }
  return status;
}

async function shell(args: string[]): Promise<number> {
  if (args[0] === "-c") return runScript(args[1] ?? "", args.slice(2));
  // Interactive (`kubectl exec -it … -- sh`): one line, one script; a prompt when there is a TTY.
  const tty = process.env.TERM !== undefined;
  const prompt = () => tty && process.stdout.write("/ # ");
  prompt();
  let status = 0;
  for await (const line of createInterface({ input: process.stdin })) {
    status = await runScript(line);
    prompt();
  }
  return status;
}

/** `busybox <applet> args…` — the runtime starts the bundle with the applet's name first. */
async function main(): Promise<void> {
  const [name = "sh", ...args] = process.argv.slice(2);
  const applet = applets[name];
  if (!applet) {
    process.stderr.write(`${name}: applet not found\n`);
    process.exit(127);
  }
  process.exitCode = await applet(args, processIO);
  // stdin may still hold the event loop open (cat, sh): an applet that is done ends the process.
  process.stdin.destroy();
}

if (process.argv[1] && /busybox(\.ts|\.mjs)?$/.test(process.argv[1])) void main();
