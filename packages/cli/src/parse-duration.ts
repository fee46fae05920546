import { OpenRathError } from "@openrath/core";

const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses a duration such as `30m`, `12h`, `7d`, `2w` or `1h30m` (units `ms`, `s`, `m`, `h`, `d`,
 * `w`; decimals allowed: `1.5h`) into milliseconds.
 *
 * @throws {OpenRathError} code `invalid_argument` for anything else (a bare number, a negative
 *   value, an unknown unit), naming the valid forms.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim().toLowerCase();
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let end = 0;
  for (let m = part.exec(trimmed); m; m = part.exec(trimmed)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    end = part.lastIndex;
  }
  if (trimmed === "" || end !== trimmed.length || !Number.isFinite(total)) {
    throw new OpenRathError(
      "invalid_argument",
      `invalid duration ${JSON.stringify(text)}: use a number and a unit, such as 30m, 12h, 7d or 1h30m (units: ms, s, m, h, d, w)`,
      { details: { value: text } },
    );
  }
  return Math.round(total);
}
