/**
 * The service-account flags of kube-apiserver, checked and turned into what the server runs:
 * the TokenRequest's signer and the token authenticator's keys, issuers and audiences.
 * Upstream: ServiceAccountAuthenticationOptions in kubernetes
 * pkg/kubeapiserver/options/authentication.go, and the signer's completion in
 * pkg/controlplane/apiserver/options/options.go.
 *
 * Solves: a mistake in these flags must stop the server at start with upstream's message, not
 * show up later as every token being refused.
 *
 * Invariants:
 * - the first `--service-account-issuer` signs; every one listed is accepted (so an issuer can
 *   be changed without invalidating the tokens already out);
 * - `--api-audiences` defaults to the first issuer;
 * - none of these flags given: no service-account tokens at all (ours — upstream requires
 *   `--service-account-issuer`, `--service-account-key-file` and
 *   `--service-account-signing-key-file`; chapters 1 and 2 start without them).
 *
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/authentication.go (ServiceAccountAuthenticationOptions.Validate, AddFlags)
 * @upstream kubernetes/kubernetes pkg/controlplane/apiserver/options/options.go (Complete: the signing key; the max token expiration bounds)
 * @chapter 03-api-security
 */
import { readFileSync } from "node:fs";
import type { TokenRESTOptions } from "../../registry/subresources/token.ts";
import {
  JWTTokenGenerator,
  parsePrivateKeyPEM,
  parsePublicKeysPEM,
  type ServiceAccountAuthenticatorOptions,
} from "./jwt.ts";

export interface ServiceAccountFlags {
  /** `--service-account-key-file`, repeatable. */
  keyFiles: string[];
  /** `--service-account-issuer`, repeatable. */
  issuers: string[];
  /** `--api-audiences`. */
  apiAudiences: string[];
  /** `--service-account-signing-key-file`. */
  signingKeyFile?: string;
  /** `--service-account-max-token-expiration` in milliseconds; 0: no limit. */
  maxTokenExpirationMs: number;
  /** `--service-account-extend-token-expiration`. */
  extendTokenExpiration: boolean;
}

export interface ServiceAccountConfig {
  /** For APIServerOptions.serviceAccountTokens. */
  tokens: TokenRESTOptions;
  /** For newServiceAccountAuthenticator, with a getter over the server's stores. */
  authentication: Omit<ServiceAccountAuthenticatorOptions, "getter">;
}

// #region validate
/** The errors of upstream's Validate and Complete, in their order and words. */
export function validateServiceAccountFlags(f: ServiceAccountFlags): string[] {
  const errs: string[] = [];
  const seen = new Set<string>();
  for (const issuer of f.issuers) {
    if (issuer.includes(":")) {
      try {
        new URL(issuer);
      } catch (e) {
        errs.push(
          `service-account-issuer ${JSON.stringify(issuer)} contained a ':' but was not a valid URL: ${(e as Error).message}`,
        );
        continue;
      }
    }
    if (issuer === "") {
      errs.push("service-account-issuer should not be an empty string");
      continue;
    }
    if (seen.has(issuer)) errs.push(`service-account-issuer ${JSON.stringify(issuer)} is already specified`);
    seen.add(issuer);
  }
  if (f.issuers.length === 0) errs.push("service-account-issuer is a required flag");
  if (f.keyFiles.length === 0) errs.push("service-account-key-file is a required flag");
  if (!f.signingKeyFile || f.issuers.length === 0) {
    errs.push("--service-account-signing-key-file and --service-account-issuer are required flags");
  }
  const max = f.maxTokenExpirationMs;
  if (max !== 0 && (max < 3600_000 || max > 2 ** 32 * 1000)) {
    errs.push("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds");
  }
  return errs;
}
// #endregion validate

/** Checks the flags and reads the key files: the config, nothing (no flag given), or the errors. */
export function serviceAccountConfigFromFlags(
  f: ServiceAccountFlags,
): ServiceAccountConfig | undefined | string[] {
  const given =
    f.keyFiles.length > 0 || f.issuers.length > 0 || f.apiAudiences.length > 0 || f.signingKeyFile;
  if (!given) return undefined;
  const errs = validateServiceAccountFlags(f);
  if (errs.length > 0) return errs;

  let generator: JWTTokenGenerator;
  try {
    generator = new JWTTokenGenerator(
      f.issuers[0],
      parsePrivateKeyPEM(readFileSync(f.signingKeyFile as string, "utf8")),
    );
  } catch (e) {
    return [`failed to parse service-account-issuer-key-file: ${(e as Error).message}`];
  }
  const publicKeys = [];
  for (const file of f.keyFiles) {
    try {
      publicKeys.push(...parsePublicKeysPEM(readFileSync(file, "utf8")));
    } catch (e) {
      return [`failed to parse key file ${JSON.stringify(file)}: ${(e as Error).message}`];
    }
  }
  const apiAudiences = f.apiAudiences.length > 0 ? f.apiAudiences : [f.issuers[0]];
  return {
    tokens: {
      generator,
      apiAudiences,
      maxExpirationSeconds: Math.floor(f.maxTokenExpirationMs / 1000),
      extendExpiration: f.extendTokenExpiration,
    },
    authentication: { issuers: f.issuers, publicKeys, apiAudiences },
  };
}
