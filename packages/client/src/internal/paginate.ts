import type { Page } from "../types.js";

/**
 * Every item of a cursor-paged list, page after page, until a page says `next: null`. A server
 * that answered the same cursor twice would loop forever, so a repeated cursor ends the walk too.
 */
export async function* paginate<T>(
  page: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const current = await page(cursor);
    yield* current.items;
    if (current.next === null || current.next === cursor) return;
    cursor = current.next;
  }
}
