import type { MemoryHit } from "@openrath/core";

/**
 * Twenty short entries on unrelated topics. None contains a word any query of the suite uses, so
 * they are noise every store must rank below the entry a test looks for.
 */
export const DISTRACTORS: readonly string[] = [
  "Gardeners should water tomato plants early in the morning.",
  "The quarterly budget review moved to the large meeting room.",
  "Our cat prefers sleeping on the warm windowsill.",
  "Cyclists must use the lane next to the river path.",
  "The bakery on Elm Street sells sourdough on weekends.",
  "Remember to renew the passport three months before travel.",
  "Jazz concerts in the park start at seven in the evening.",
  "The printer on the second floor jams with thick paper.",
  "Volunteers sort donated books every Thursday afternoon.",
  "Mount Rainier is visible from the office on clear days.",
  "The chess club meets in the library basement.",
  "Snow chains are required on mountain roads from November.",
  "Fresh basil loses flavour when it is cooked too long.",
  "The marathon route passes the old harbour twice.",
  "Solar panels on the roof produce most power around noon.",
  "Kids enjoy the puppet theatre during school holidays.",
  "The violin teacher assigns scales before every lesson.",
  "Hikers spotted a family of otters near the waterfall.",
  "The museum opens its new dinosaur exhibit in spring.",
  "Coffee beans stay fresh longer in an airtight jar.",
];

const FILLER = [
  "amber",
  "birch",
  "canyon",
  "dune",
  "ember",
  "fjord",
  "grove",
  "heath",
  "inlet",
  "juniper",
  "knoll",
  "lagoon",
  "meadow",
  "nectar",
  "orchard",
  "prairie",
  "quarry",
  "ridge",
  "savanna",
  "thicket",
  "upland",
  "valley",
  "willow",
  "yarrow",
  "zephyr",
  "bramble",
  "cedar",
  "delta",
  "estuary",
  "fern",
];

/**
 * `count` filler words separated by spaces, the same for the same `seed`. The words are nature
 * nouns no query of the suite uses.
 */
export function fillerText(count: number, seed = 1): string {
  let state = seed >>> 0 || 1;
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    words.push(FILLER[state % FILLER.length]!);
  }
  return words.join(" ");
}

/** The lower-cased words of `text` (runs of letters and digits), for checking test inputs. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The texts of `hits`, best first. */
export function texts(hits: readonly MemoryHit[]): string[] {
  return hits.map((hit) => hit.entry.text);
}

/** The ids of `hits`, best first. */
export function ids(hits: readonly MemoryHit[]): string[] {
  return hits.map((hit) => hit.entry.id);
}

/** A short JSON view of `hits` for failure messages: text (cut at 60 characters), scope path and score. */
export function showHits(hits: readonly MemoryHit[]): string {
  return JSON.stringify(
    hits.map((hit) => ({
      text: hit.entry.text.length > 60 ? `${hit.entry.text.slice(0, 60)}…` : hit.entry.text,
      scope: Object.values(hit.entry.scope).join("/"),
      score: hit.score,
    })),
  );
}
