/** The page's element with this id; a missing one is a broken page, said at once. */
export function element<T extends HTMLElement>(id: string): T {
	const found = document.getElementById(id);
	if (found === null) throw new Error(`#${id} is missing`);
	return found as T;
}

/** A list item with this text (never HTML: what is shown may come from a pasted body). */
export function listItem(text: string): HTMLLIElement {
	const item = document.createElement('li');
	item.textContent = text;
	return item;
}
