import Elk from "elkjs/lib/elk.bundled.js";
import { type LayoutNodes, layoutRuns, layoutWith } from "./elk-layout.js";

/** Studio's layout worker: ELK off the page's main thread, so a large graph never freezes it. */
export interface LayoutRequest {
  readonly id: number;
  readonly nodes: LayoutNodes;
  readonly aspectRatio: number;
  /** Run by run (`layoutRuns`): the last run alone, or all of them; whole (`layoutWith`) if absent. */
  readonly part?: "last" | "all";
}

export type LayoutReply =
  | { readonly id: number; readonly placed: readonly (readonly [string, number, number])[] }
  | { readonly id: number; readonly error: string };

const elk = new Elk();
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<LayoutRequest>) => void) | null;
  postMessage(message: LayoutReply): void;
};

scope.onmessage = async ({ data }) => {
  try {
    const placed = data.part
      ? await layoutRuns(elk, data.nodes, data.aspectRatio, data.part)
      : await layoutWith(elk, data.nodes, data.aspectRatio);
    scope.postMessage({ id: data.id, placed: [...placed].map(([id, p]) => [id, p.x, p.y] as const) });
  } catch (error) {
    scope.postMessage({ id: data.id, error: error instanceof Error ? error.message : String(error) });
  }
};
