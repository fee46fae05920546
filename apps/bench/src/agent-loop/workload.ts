// The one workload every side of the agent-loop bench runs: the same scripted turns and tool.

/** Model calls per run: turns 1 to 9 each call `word_count` once, turn 10 answers in text. */
export const TURNS = 10;
export const TOOL_TURNS = TURNS - 1;
export const QUESTION = "How many words are in the sample, counted ten times over?";
export const SAMPLE = "the quick brown fox jumps over the lazy dog";
export const SAMPLE_WORDS = 9;
export const ANSWER = `${SAMPLE_WORDS} words, every time.`;
export const TOOL_RESULT = `{"words":${SAMPLE_WORDS}}`;
export const USAGE = { promptTokens: 100, completionTokens: 10, totalTokens: 110 };
/** Characters per streamed text delta, on every side. */
export const DELTA_CHARS = 8;

/** What a side did, counted inside its model and its tool so every side can be checked to match. */
export interface Counts {
  model: number;
  tool: number;
}

/** What a finished run produced, in terms every side can report. */
export interface RunShape {
  readonly assistant: number;
  readonly toolResults: number;
  readonly failedResults: number;
  readonly answer: unknown;
  /** Stream events the consumer saw (0 without streaming). */
  readonly streamed: number;
}

/** The shape every side's run must have. */
export const WANT = { assistant: TURNS, toolResults: TOOL_TURNS, failedResults: 0, answer: ANSWER };

export const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** The one rule every scripted model follows: call the tool until it has run TOOL_TURNS times. */
export const wantsTool = (toolResults: number) => toolResults < TOOL_TURNS;

/** One side of the bench: a name, what it is, and a run that reports its shape. */
export interface Side {
  readonly name: string;
  readonly what: string;
  readonly streaming: boolean;
  readonly counts: Counts;
  run(): Promise<RunShape>;
}
