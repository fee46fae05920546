import type { ProviderDelta, ProviderResponse } from "@openrath/core";
import type OpenAI from "openai";
import { callControl } from "./call-control.js";
import { abortedError, type ErrorContext, timeoutError, toProviderError } from "./to-provider-error.js";

/** What both APIs' calls share: the client, the default model and the deadline. */
export interface CallSettings {
  readonly client: OpenAI;
  readonly baseURL: string;
  /** The longest silence from the server, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * The `Authorization` header of one request when the key is a secret reference, resolved just
   * before the request (see ADR 0029).
   */
  readonly auth?: ((signal: AbortSignal | undefined) => Promise<Record<string, string>>) | undefined;
}

/** SDK request options for one call: our signal, our deadline, and never the SDK's own retries. */
function requestOptions(
  settings: CallSettings,
  signal: AbortSignal,
  headers: Record<string, string> | undefined,
) {
  return { signal, maxRetries: 0, timeout: settings.timeoutMs, ...(headers ? { headers } : {}) };
}

type RequestOptions = ReturnType<typeof requestOptions>;

/**
 * Runs one non-streamed SDK call for model `requested` under the provider's deadline and the
 * caller's signal, mapping every failure to a `ProviderError`.
 */
export async function completeCall<T>(
  settings: CallSettings,
  requested: string,
  signal: AbortSignal | undefined,
  run: (options: RequestOptions) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) throw abortedError(requested, signal);
  // A missing secret fails here with its own code (secret_not_found), not as a provider error.
  const headers = settings.auth ? await settings.auth(signal) : undefined;
  const control = callControl(signal, settings.timeoutMs);
  try {
    return await run(requestOptions(settings, control.signal, headers));
  } catch (error) {
    throw toProviderError(error, {
      model: requested,
      baseURL: settings.baseURL,
      signal,
      timedOut: control.timedOut,
      timeoutMs: settings.timeoutMs,
      phase: "request",
      started: false,
    });
  } finally {
    control.done();
  }
}

/** How one API's stream events become deltas and, at the end, the response. */
export interface StreamFold<E> {
  /**
   * The deltas for one event, in order. May throw a `ProviderError` (an error event in the
   * stream); `started` says whether a delta already reached the caller.
   */
  add(event: E, started: boolean): readonly ProviderDelta[];
  /**
   * The response, once the events ran out.
   *
   * @throws ProviderError `provider_stream` when the stream ended before the model finished.
   */
  finish(started: boolean): ProviderResponse;
}

/**
 * Runs one streamed SDK call: opens it under the caller's signal and an idle deadline (restarted
 * by every event, paused while the caller holds a delta), yields the fold's deltas, and ends with
 * the fold's response. Failures become `ProviderError`s that are retryable only while no delta
 * has reached the caller.
 */
export async function* streamCall<E>(
  settings: CallSettings,
  requested: string,
  signal: AbortSignal | undefined,
  open: (options: RequestOptions) => Promise<AsyncIterable<E>>,
  fold: StreamFold<E>,
): AsyncGenerator<ProviderDelta, void, undefined> {
  if (signal?.aborted) throw abortedError(requested, signal);
  const headers = settings.auth ? await settings.auth(signal) : undefined;
  const control = callControl(signal, settings.timeoutMs);
  let phase: ErrorContext["phase"] = "request";
  let started = false;
  const context = (): ErrorContext => ({
    model: requested,
    baseURL: settings.baseURL,
    signal,
    timedOut: control.timedOut,
    timeoutMs: settings.timeoutMs,
    phase,
    started,
  });
  try {
    const events = await open(requestOptions(settings, control.signal, headers));
    phase = "stream";
    control.touch();
    for await (const event of events) {
      const out = fold.add(event, started);
      if (out.length === 0) {
        control.touch();
        continue;
      }
      // The caller's pace is not the server's silence: no deadline while a delta is out.
      control.pause();
      for (const delta of out) {
        started = true;
        yield delta;
      }
      control.touch();
    }
  } catch (error) {
    throw toProviderError(error, context());
  } finally {
    control.done();
  }
  // The SDK ends a stream quietly when its signal aborts, so look at why it ended.
  if (signal?.aborted) throw abortedError(requested, signal);
  if (control.timedOut) throw timeoutError(context());
  yield { type: "response", response: fold.finish(started) };
}
