import { exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from "jose";

/** A test identity provider: one signing key, its JWKS, and tokens for any claims. */
export async function jwtIssuer(options: { issuer?: string; audience?: string } = {}) {
  const issuer = options.issuer ?? "https://id.example.test";
  const audience = options.audience ?? "openrath";
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" }] };
  return {
    issuer,
    audience,
    jwks,
    /** A signed token for `claims` (expiring in `expiresIn`, default 1 h). */
    async sign(
      claims: Record<string, unknown>,
      expiresIn: string | number = "1h",
      sign = { issuer, audience },
    ) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer(sign.issuer)
        .setAudience(sign.audience)
        .setSubject(String(claims.sub ?? "user-1"))
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(privateKey);
    },
  };
}
