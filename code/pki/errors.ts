/**
 * PKIError — why the PKI directory cannot be used as it is, as a value: which file, what is wrong
 * with it (in kubeadm's words where kubeadm has them), and what to do.
 * Mirrors the errors of upstream's kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certs.go.
 *
 * Solves: a re-run finds files it did not just write. A certificate whose key does not match, that
 * our CA did not sign, or that names another identity must not be silently replaced — the learner
 * may have put it there on purpose, and replacing a CA invalidates every kubeconfig handed out —
 * so the run stops and says which file and how to go on.
 *
 * Invariants:
 * - `file` is the path of the file at fault (absent only for a bad option);
 * - `message` is one whole sentence: the problem, then the fix — delete the file (the next run
 *   makes it again from what remains) or re-run with `--force` (which makes every key and
 *   certificate again, and so invalidates every credential made before).
 *
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certs.go (writeCertificateFilesIfNotExist: "certificate %s is not signed by corresponding CA")
 * @chapter 03-api-security
 */

export type PKIErrorReason =
  /** an option the caller gave cannot be used (a node name, the server URL). */
  | "InvalidOption"
  /** a file cannot be parsed as what its name says. */
  | "Unreadable"
  /** one file of a pair is missing and cannot be made from the other. */
  | "Missing"
  /** a private key is not the one its certificate (or sa.pub) was made for. */
  | "KeyMismatch"
  /** a certificate was not signed by ca.crt. */
  | "NotSignedByCA"
  /** a certificate or kubeconfig does not say what is asked (subject, SANs, usage, server, data). */
  | "Mismatch";

export class PKIError extends Error {
  override readonly name = "PKIError";
  constructor(
    readonly reason: PKIErrorReason,
    message: string,
    /** The file at fault. */
    readonly file?: string,
  ) {
    super(message);
  }
}

/** The second half of every fix: a tool that has no `--force` (the cluster launcher) says its own. */
export const forceFix = "re-run with --force to make every key and certificate again";

/** The fix every file error ends with. */
export function fixHint(...files: string[]): string {
  const which = files.length === 1 ? files[0] : `${files.slice(0, -1).join(", ")} and ${files.at(-1)}`;
  return `delete ${which} to have it made again, or ${forceFix}`;
}
