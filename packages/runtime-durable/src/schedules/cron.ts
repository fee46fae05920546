import { CronExpressionParser } from "cron-parser";
import { DurableError } from "../contract/durable-error.js";

/** The longest cron expression accepted, in characters. */
const MAX_CRON = 256;

/** Whether `timezone` is an IANA zone this runtime's `Intl` knows. */
function knownZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first time strictly after `after` (epoch ms) that the cron expression names, read in the
 * IANA `timezone`, or `null` when it names none. Five fields (minute first) or six (seconds
 * first), through `cron-parser`.
 *
 * @throws {DurableError} `invalid_cron` for an expression or zone that does not parse.
 */
export function nextFireTime(cron: string, timezone: string, after: number): number | null {
  if (typeof cron !== "string" || cron.trim() === "" || cron.length > MAX_CRON)
    throw new DurableError(
      "invalid_cron",
      `A cron expression is a non-empty string of at most ${MAX_CRON} characters, got ${JSON.stringify(cron)}.`,
      { details: { cron: String(cron) } },
    );
  if (typeof timezone !== "string" || !knownZone(timezone))
    throw new DurableError(
      "invalid_cron",
      `Unknown time zone ${JSON.stringify(timezone)}; give an IANA zone such as "UTC" or "Europe/Berlin".`,
      { details: { timezone: String(timezone) } },
    );
  let expression: ReturnType<typeof CronExpressionParser.parse>;
  try {
    expression = CronExpressionParser.parse(cron, {
      currentDate: new Date(after),
      tz: timezone,
      strict: false,
    });
  } catch (error) {
    throw new DurableError(
      "invalid_cron",
      `The cron expression ${JSON.stringify(cron)} does not parse (${(error as Error).message}); give five fields (minute hour day-of-month month day-of-week) or six with seconds first.`,
      { details: { cron }, cause: error },
    );
  }
  if (!expression.hasNext()) return null;
  return expression.next().getTime();
}

/**
 * Checks a schedule's expression and zone and gives its first fire time after `now`.
 *
 * @throws {DurableError} `invalid_cron`, also for an expression that never fires.
 */
export function firstFireTime(cron: string, timezone: string, now: number): number {
  const next = nextFireTime(cron, timezone, now);
  if (next === null)
    throw new DurableError(
      "invalid_cron",
      `The cron expression ${JSON.stringify(cron)} names no future time.`,
      {
        details: { cron },
      },
    );
  return next;
}
