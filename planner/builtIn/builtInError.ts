/** A setting the built-in path cannot honour: the message says which and why, the hint what to do. */
export class BuiltInError extends Error {
	constructor(
		message: string,
		readonly hint: string,
	) {
		super(message);
		this.name = 'BuiltInError';
	}
}
