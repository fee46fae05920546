import { useState } from "react";
import { clientFor, describeError } from "../api.js";

/**
 * Sign in with a bearer token (an `ort_…` token from `openrath tokens create`, or a JWT). The
 * token is checked with one request and kept in this tab's sessionStorage. On a server in local
 * mode (`openrath serve` on a loopback host) an empty token works.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main className="sign-in">
      <form
        aria-label="Sign in"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            await clientFor(token.trim()).runs.list({ limit: 1 });
            onSignedIn(token.trim());
          } catch (err) {
            setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <h1>
          OpenRath <span>Studio</span>
        </h1>
        <p className="muted">Runs, session graphs, interrupts and effects of this server.</p>
        <label htmlFor="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          placeholder="ort_… or a JWT (empty on a local server)"
          value={token}
          onChange={(e) => setToken(e.target.value)}
        />
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p className="muted small">
          The token stays in this tab (sessionStorage) and is sent only to this server.
        </p>
      </form>
    </main>
  );
}
