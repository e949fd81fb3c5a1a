/**
 * The image catalog — the "registry" the process runtime pulls from: image names with their tags,
 * the program each runs, and its default entrypoint.
 * No upstream counterpart as code: a registry serves image manifests (OCI distribution spec);
 * the fields mirror an image config's Entrypoint, Cmd and Env.
 *
 * Solves:
 * - a pod names an image, not a program: `course/web:1.0` must resolve to a program, while a
 *   name that is not in the catalog must fail to pull (ErrImagePull, as an unknown image does).
 * - an image is a filesystem of executables, so `command: ["sh", "-c", …]` or an exec probe's
 *   `cat /tmp/healthy` must find its program: every image carries its own program plus the
 *   busybox applets (as images built FROM busybox do).
 *
 * Invariants:
 * - an executable name resolves to exactly one program file of the image; a name resolving to
 *   nothing is runc's `executable file not found in $PATH`.
 * - entrypoint/cmd follow the image config rules: a container's `command` replaces the entrypoint
 *   (and drops the image's cmd), its `args` replace the cmd.
 *
 * @upstream opencontainers/image-spec config.md (Entrypoint, Cmd, Env)
 * @upstream kubernetes/website content/en/docs/tasks/inject-data-application/define-command-argument-container.md (command vs Entrypoint, args vs Cmd)
 * @chapter 07-kubelet
 */
import { applets } from "./busybox.ts";

export interface CatalogImage {
  /** Repository name, e.g. "course/web". */
  repository: string;
  tags: string[];
  /** The image's own program: a file `<program>.ts` beside this one (busybox images have none). */
  program?: string;
  /** The image config's Entrypoint and Cmd. */
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
}

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

function image(
  repository: string,
  tags: string[],
  program: string | undefined,
  entrypoint: string[],
  cmd: string[] = [],
) {
  return { repository, tags, program, entrypoint, cmd, env: { PATH } } satisfies CatalogImage;
}

export const catalog: CatalogImage[] = [
  image("course/web", ["1.0", "latest"], "web", ["web"]),
  image("course/crasher", ["1.0", "latest"], "crasher", ["crasher"]),
  image("course/sleeper", ["1.0", "latest"], "sleeper", ["sleeper"]),
  image("course/echo", ["1.0", "latest"], "echo", ["echo"], ["hello from course/echo"]),
  image("course/worker", ["1.0", "latest"], "worker", ["worker"]),
  image("course/memhog", ["1.0", "latest"], "memhog", ["memhog"]),
  // The names upstream's examples use (registry.k8s.io/busybox in the probe tutorial).
  image("busybox", ["1.36", "latest"], undefined, [], ["sh"]),
  image("registry.k8s.io/busybox", ["1.36", "latest"], undefined, [], ["sh"]),
];

/** The catalog entry for `name:tag`, or undefined (a registry's 404). */
export function lookupImage(normalizedName: string): CatalogImage | undefined {
  const colon = normalizedName.lastIndexOf(":");
  const repository = normalizedName.slice(0, colon);
  const tag = normalizedName.slice(colon + 1);
  return catalog.find((img) => img.repository === repository && img.tags.includes(tag));
}

/** The names of the busybox applets every image carries. */
export const appletNames = Object.keys(applets);

/**
 * Which program runs for `executable` in `img`: its own program (by name), else a busybox applet
 * (then the applet's name goes first, busybox style). A path like /bin/sh looks at its last part.
 */
export function resolveExecutable(
  img: CatalogImage,
  executable: string,
): { program: string; argv0?: string } | undefined {
  const base = executable.slice(executable.lastIndexOf("/") + 1);
  if (img.program && base === img.program) return { program: img.program };
  if (appletNames.includes(base)) return { program: "busybox", argv0: base };
  return undefined;
}
