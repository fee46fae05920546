/** The task the demo gives its team; the scripted brain answers it (and any other quoted sentence). */
export const TASK =
  'Analyse the sentence "The quick brown fox jumps over the lazy dog": count its words, find its longest word and tally its letters.';
