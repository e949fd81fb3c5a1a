/**
 * Service-account JWTs — signing them (the TokenRequest's generator) and authenticating them
 * (the bearer-token authenticator that turns one back into a user). Upstream: kubernetes
 * pkg/serviceaccount/jwt.go (JWTTokenGenerator, JWTTokenAuthenticator), with the keys read as
 * client-go's util/keyutil reads PEM files.
 *
 * Solves:
 * - the API server proves to itself, later, that it issued a token: it signs with the private
 *   key of `--service-account-signing-key-file` and checks with every public key of
 *   `--service-account-key-file` (several, so that keys can be rotated: old tokens stay valid
 *   while the new key signs);
 * - one token must not work everywhere: the issuer must be one of `--service-account-issuer`,
 *   and the token's audiences must meet the API server's own (`--api-audiences`), so a token
 *   minted for a vault or a cloud provider cannot be replayed against the API server;
 * - a bearer token that is not ours (another issuer, not a JWT at all) is "not mine": the next
 *   authenticator (the token file, say) may still accept it.
 *
 * Invariants:
 * - `iss` is peeked at before the signature is checked only to decide "mine or not"; every
 *   claim is trusted only after the signature verifies, and the issuer is checked again then;
 * - the key ID (`kid`) is the unpadded base64url SHA-256 of the public key's DER (SPKI) form:
 *   it picks the key without revealing it;
 * - RSA keys sign RS256; ECDSA keys ES256, ES384 or ES512 by curve.
 *
 * What upstream does differently: it also accepts legacy secret-based tokens (issuer
 * `kubernetes/serviceaccount`, no expiry), and TokenReview may ask for other audiences than the
 * API server's; neither is here.
 *
 * @upstream kubernetes/kubernetes pkg/serviceaccount/jwt.go (JWTTokenGenerator, keyIDFromPublicKey, JWTTokenAuthenticator, hasCorrectIssuer)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/util/keyutil/key.go (ParsePublicKeysPEM, ParsePrivateKeyPEM)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/bearertoken/bearertoken.go (Authenticator.AuthenticateRequest)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/authenticator/audiences.go (Audiences.Intersect)
 * @chapter 03-api-security
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { CompactSign, compactVerify, decodeProtectedHeader } from "jose";
import type { Authenticator, AuthenticatorResponse } from "../authenticator.ts";
import {
  claimTypeError,
  InvalidTokenError,
  type ServiceAccountClaims,
  validateServiceAccountClaims,
} from "./claims.ts";
import type { ServiceAccountTokenGetter } from "./getter.ts";
import { serviceAccountUserInfo } from "./user.ts";

// #region keys
/** keyIDFromPublicKey: a name for the key that cannot be turned back into the key. */
export function keyIDFromPublicKey(key: KeyObject): string {
  const publicKey = key.type === "private" ? createPublicKey(key) : key;
  const der = publicKey.export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("base64url");
}

/** The JWS algorithm a key signs with, as upstream chooses it. */
export function algorithmFor(key: KeyObject): string {
  if (key.asymmetricKeyType === "rsa") return "RS256";
  if (key.asymmetricKeyType === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const alg = { prime256v1: "ES256", secp384r1: "ES384", secp521r1: "ES512" }[curve ?? ""];
    if (alg) return alg;
    throw new TypeError("unknown private key curve, must be 256, 384, or 521");
  }
  throw new TypeError(`unknown private key type ${key.asymmetricKeyType}, must be RSA or ECDSA`);
}

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * ParsePublicKeysPEM: every RSA or ECDSA key in a PEM file — public keys, and the public half of
 * private keys or certificates; other blocks are skipped.
 */
export function parsePublicKeysPEM(pem: string): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const [block] of pem.matchAll(pemBlock)) {
    try {
      const key = createPublicKey(block);
      if (key.asymmetricKeyType === "rsa" || key.asymmetricKeyType === "ec") keys.push(key);
    } catch {
      // not a key block: tolerated, as upstream does
    }
  }
  if (keys.length === 0) throw new TypeError("data does not contain any valid RSA or ECDSA public keys");
  return keys;
}

/** ParsePrivateKeyPEM: the first RSA or ECDSA private key in a PEM file. */
export function parsePrivateKeyPEM(pem: string): KeyObject {
  for (const [block] of pem.matchAll(pemBlock)) {
    try {
      const key = createPrivateKey(block);
      if (key.asymmetricKeyType === "rsa" || key.asymmetricKeyType === "ec") return key;
    } catch {
      // not a private key block
    }
  }
  throw new TypeError("data does not contain a valid RSA or ECDSA private key");
}
// #endregion keys

// #region generator
/** JWTTokenGenerator: signs claims as the issuer `iss` with the private key. */
export class JWTTokenGenerator {
  readonly alg: string;
  readonly keyID: string;

  constructor(
    readonly iss: string,
    private readonly privateKey: KeyObject,
  ) {
    this.alg = algorithmFor(privateKey);
    this.keyID = keyIDFromPublicKey(privateKey);
  }

  async generateToken(claims: ServiceAccountClaims): Promise<string> {
    // Upstream's encoder writes the merged claims as a map: keys sorted, the issuer among them.
    const merged: Record<string, unknown> = { ...claims, iss: this.iss };
    const payload = Object.fromEntries(
      Object.keys(merged)
        .sort()
        .map((k) => [k, merged[k]]),
    );
    return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: this.alg, kid: this.keyID })
      .sign(this.privateKey);
  }
}
// #endregion generator

export interface ServiceAccountAuthenticatorOptions {
  /** `--service-account-issuer`, every one of them: a token from any is accepted. */
  issuers: string[];
  /** `--service-account-key-file`: the keys a signature may verify with. */
  publicKeys: KeyObject[];
  /** `--api-audiences`: a token must be for at least one (a token with none counts as for these). */
  apiAudiences: string[];
  /** Where the ServiceAccounts and bound objects are read (getter.ts). */
  getter: ServiceAccountTokenGetter;
  /** The clock (tests). */
  now?: () => Date;
}

/** The constructor for the authentication config: service-account JWTs as bearer tokens. */
export function newServiceAccountAuthenticator(
  opts: ServiceAccountAuthenticatorOptions,
): ServiceAccountTokenAuthenticator {
  return new ServiceAccountTokenAuthenticator(opts);
}

export class ServiceAccountTokenAuthenticator implements Authenticator {
  private readonly issuers: Set<string>;
  private readonly keysByID = new Map<string, KeyObject[]>();

  constructor(private readonly opts: ServiceAccountAuthenticatorOptions) {
    this.issuers = new Set(opts.issuers);
    for (const key of opts.publicKeys) {
      const id = keyIDFromPublicKey(key);
      this.keysByID.set(id, [...(this.keysByID.get(id) ?? []), key]);
    }
  }

  // #region bearer-token
  /** bearertoken.Authenticator: `Authorization: Bearer <token>`, or not ours. */
  async authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null> {
    const auth = (req.headers.authorization ?? "").trim();
    const parts = auth.split(" ");
    if (parts.length < 2 || parts[0].toLowerCase() !== "bearer") return null;
    const token = parts[1];
    // An empty token ("Bearer ") is no credential at all.
    if (!token) return null;
    return this.authenticateToken(token);
  }
  // #endregion bearer-token

  // #region authenticate-token
  /** JWTTokenAuthenticator.AuthenticateToken: null for "not a token of ours", a throw for a bad one. */
  async authenticateToken(token: string): Promise<AuthenticatorResponse | null> {
    if (!this.hasCorrectIssuer(token)) return null;

    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return null; // not a JWS: go-jose's ParseSigned fails, and upstream says "not mine"
    }
    const keys = kid ? (this.keysByID.get(kid) ?? []) : this.opts.publicKeys;
    if (keys.length === 0) throw new InvalidTokenError("invalid signature, no keys found");
    let payload: Uint8Array | undefined;
    const errors: string[] = [];
    for (const key of keys) {
      try {
        payload = (await compactVerify(token, key)).payload;
        break;
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (!payload) throw new InvalidTokenError(errors.join(", "));
    let decoded: unknown;
    try {
      decoded = JSON.parse(new TextDecoder().decode(payload));
    } catch (e) {
      throw new InvalidTokenError((e as Error).message);
    }
    // Typed as go-jose decodes them: a claim of the wrong type fails the token (claims.ts).
    const typeError = claimTypeError(decoded);
    if (typeError) throw new InvalidTokenError(typeError);
    const claims = (decoded ?? {}) as ServiceAccountClaims;

    // The issuer again, now that the payload is known to be ours.
    if (!this.issuers.has(claims.iss ?? ""))
      throw new InvalidTokenError(`token issuer "${claims.iss}" is invalid`);

    const implicit = this.opts.apiAudiences;
    let tokenAudiences = typeof claims.aud === "string" ? [claims.aud] : (claims.aud ?? []);
    // A token without audiences (legacy) is taken as one for the API server.
    if (tokenAudiences.length === 0) tokenAudiences = implicit;
    const audiences = tokenAudiences.filter((a) => implicit.includes(a));
    if (audiences.length === 0 && implicit.length !== 0) {
      throw new InvalidTokenError(
        `token audiences ${JSON.stringify(tokenAudiences)} is invalid for the target audiences ${JSON.stringify(implicit)}`,
      );
    }

    const sa = await validateServiceAccountClaims(claims, this.opts.getter, this.opts.now?.());
    return { user: serviceAccountUserInfo(sa), audiences };
  }
  // #endregion authenticate-token

  /** An unverified look at `iss`: is this a JWT of one of our issuers? */
  private hasCorrectIssuer(token: string): boolean {
    if (token.trim().startsWith("{")) return false;
    const parts = token.split(".");
    if (parts.length !== 3) return false;
    try {
      const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as { iss?: unknown };
      return typeof claims.iss === "string" && this.issuers.has(claims.iss);
    } catch {
      return false;
    }
  }
}
