import type { ProviderCallOptions, ProviderDelta, ProviderRequest, ProviderResponse } from "@openrath/core";
import type {
  ResponseCreateParamsNonStreaming,
  ResponseCreateParamsStreaming,
} from "openai/resources/responses/responses";
import { type CallSettings, completeCall, streamCall } from "./call-driver.js";
import { toResponsesRequest } from "./responses-request.js";
import { fromResponse } from "./responses-response.js";
import { responsesFold } from "./responses-stream-fold.js";
import type { RequestDefaults } from "./to-wire-request.js";

/**
 * `complete` and `stream` over the Responses API (`POST /responses`), stateless on our side: each
 * call sends the whole transcript as `input` (no `previous_response_id`), with the turn's
 * reasoning items back in place.
 */
export function responsesApi(settings: CallSettings, defaults: RequestDefaults, model: string) {
  return {
    complete(request: ProviderRequest, call: ProviderCallOptions = {}): Promise<ProviderResponse> {
      const requested = request.model ?? model;
      return completeCall(settings, requested, call.signal, async (options) => {
        const body = toResponsesRequest(request, defaults, model, false);
        const response = await settings.client.responses.create(
          body as unknown as ResponseCreateParamsNonStreaming,
          options,
        );
        return fromResponse(response, requested);
      });
    },

    async *stream(
      request: ProviderRequest,
      call: ProviderCallOptions = {},
    ): AsyncGenerator<ProviderDelta, void, undefined> {
      const requested = request.model ?? model;
      // Inside the generator, so a request that cannot be sent fails where the caller reads.
      const body = toResponsesRequest(request, defaults, model, true);
      yield* streamCall(
        settings,
        requested,
        call.signal,
        (options) =>
          settings.client.responses.create(
            body as unknown as ResponseCreateParamsStreaming,
            options,
          ) as unknown as Promise<AsyncIterable<Record<string, unknown>>>,
        responsesFold(requested, settings.baseURL),
      );
    },
  };
}
