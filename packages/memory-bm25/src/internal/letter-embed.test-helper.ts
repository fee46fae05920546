/**
 * A deterministic embedding for tests: how often each letter a–z occurs (after folding accents).
 * Texts with the same letters (anagrams) get the same direction.
 */
export async function letterEmbed(texts: string[]): Promise<number[][]> {
  return texts.map((text) => {
    const vector = new Array<number>(26).fill(0);
    for (const char of text.normalize("NFD").toLowerCase()) {
      const i = char.charCodeAt(0) - 97;
      if (i >= 0 && i < 26) vector[i]! += 1;
    }
    return vector;
  });
}
