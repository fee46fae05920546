import { type Message, type ProviderRequest, ScriptedProvider, type ScriptedTurn } from "@openrath/core";

/** The role an agent's instructions start with, which is how the scripted brain tells agents apart. */
export const ROLES = {
  planner: "You are the planner.",
  wordsmith: "You are the wordsmith.",
  analyst: "You are the analyst.",
  statistician: "You are the statistician.",
  compressor: "You are the compressor.",
  router: "You are the router.",
  writer: "You are the writer.",
  reviewer: "You are the reviewer.",
} as const;

/** Each specialist's small program: a file it writes, then runs with node. */
const PROGRAMS: Record<
  "wordsmith" | "analyst" | "statistician",
  { file: string; code: (text: string) => string; say: (out: string) => string }
> = {
  wordsmith: {
    file: "wordsmith/count-words.js",
    code: (text) =>
      `const text = ${JSON.stringify(text)};\nconsole.log(text.split(/\\s+/).filter(Boolean).length);\n`,
    say: (out) => `The sentence has ${out} words.`,
  },
  analyst: {
    file: "analyst/longest-word.js",
    code: (text) =>
      `const text = ${JSON.stringify(text)};\nconst words = text.toLowerCase().match(/[a-z]+/g) ?? [];\nconsole.log(words.reduce((a, b) => (b.length > a.length ? b : a), ""));\n`,
    say: (out) => `The longest word is "${out}".`,
  },
  statistician: {
    file: "statistician/letters.js",
    code: (text) =>
      `const text = ${JSON.stringify(text)};\nconst counts = {};\nfor (const c of text.toLowerCase().replace(/[^a-z]/g, "")) counts[c] = (counts[c] ?? 0) + 1;\nconst top = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3);\nconsole.log(Object.keys(counts).length + " distinct letters; most frequent: " + top.map(([c, n]) => c + "=" + n).join(", "));\n`,
    say: (out) => `Letter statistics: ${out}.`,
  },
};

const text = (m: Message | undefined) => (m && typeof m.content === "string" ? m.content : "");

/** The quoted text the user asked about. */
function subject(messages: readonly Message[]): string {
  const user = messages.find((m) => m.role === "user");
  return /"([^"]+)"/.exec(text(user))?.[1] ?? text(user);
}

/** A specialist's next step: write its program, run it, then report what it printed. */
function specialist(role: keyof typeof PROGRAMS, messages: readonly Message[]): ScriptedTurn {
  const program = PROGRAMS[role];
  const last = messages.at(-1);
  if (last?.role !== "tool") {
    return {
      text: `Writing ${program.file}.`,
      toolCalls: [
        {
          name: "write_workspace_file",
          arguments: { path: program.file, content: program.code(subject(messages)) },
        },
      ],
    };
  }
  const result = JSON.parse(last.content) as {
    bytes_written?: number;
    exit_code?: number;
    stdout?: string;
    stderr?: string;
  };
  if (result.bytes_written !== undefined) {
    return { toolCalls: [{ name: "run_shell_command", arguments: { cmd: `node ${program.file}` } }] };
  }
  if (result.exit_code === 0) return { text: program.say((result.stdout ?? "").trim()) };
  return { text: `My program failed (exit ${result.exit_code}): ${(result.stderr ?? "").trim()}` };
}

/** The findings the specialists reported, in transcript order. */
function findings(messages: readonly Message[]): string[] {
  return messages
    .filter(
      (m) =>
        m.role === "assistant" &&
        typeof m.content === "string" &&
        /^(The sentence|The longest|Letter statistics|My program)/.test(m.content),
    )
    .map((m) => text(m));
}

/**
 * A deterministic stand-in for a model that plays every role of the demo, so it runs with no API
 * key. It decides from the agent's instructions (the first message) and the transcript, and its
 * specialists really write and run programs in the sandbox: their findings are the programs' output.
 */
export function scriptedBrain(): ScriptedProvider {
  return new ScriptedProvider((request: ProviderRequest) => {
    const messages = request.messages;
    const head = text(messages[0]);
    if (head.startsWith(ROLES.planner)) {
      return {
        text: `Plan for "${subject(messages)}": the wordsmith counts the words, the analyst finds the longest word and the statistician tallies the letters. Each writes a small program in the shared workspace and runs it; then the findings are merged, summarized and written up.`,
      };
    }
    if (head.startsWith(ROLES.wordsmith)) return specialist("wordsmith", messages);
    if (head.startsWith(ROLES.analyst)) return specialist("analyst", messages);
    if (head.startsWith(ROLES.statistician)) return specialist("statistician", messages);
    if (head.startsWith(ROLES.compressor)) {
      return { text: `Task: analyse "${subject(messages)}". Findings: ${findings(messages).join(" ")}` };
    }
    if (head.startsWith(ROLES.router)) {
      // The router reads the compressed summary, which quotes the specialists' findings.
      const failed = messages.slice(1).some((m) => text(m).includes("My program failed"));
      return { text: failed ? "1" : "0" };
    }
    if (head.startsWith(ROLES.writer)) {
      const summary = text(messages.findLast((m) => m.role === "user"));
      const facts = summary.replace(/^.*Findings: /, "");
      return { text: `Here is what the team found. ${facts}` };
    }
    if (head.startsWith(ROLES.reviewer))
      return { text: "One of the programs failed; here is what went wrong." };
    return undefined;
  }, "scripted-brain");
}
