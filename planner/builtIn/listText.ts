/** "A", "A and B", "A, B and C": a list of names in a sentence, made from data, never written by hand. */
export function listText(names: readonly string[]): string {
	if (names.length <= 1) return names.join('');
	return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
