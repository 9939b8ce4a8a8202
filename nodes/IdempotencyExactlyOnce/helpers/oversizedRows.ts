import { KeyError } from '../../shared/keys/KeyError';
import type { OversizedRecord } from '../../shared/store/recordSize';

/**
 * Recording as a step, the rows one event's statements returned are over the record cap: they were
 * rolled back rather than committed without their record (a retry would run them again) or with a
 * cut one. `allRolledBack`: the node stops at this item, and the batch shares one transaction, so
 * nothing of the execution committed; else the batch's other events committed without it.
 */
export function oversizedRowsError(
	key: string,
	step: string,
	{ bytes, limit }: OversizedRecord,
	allRolledBack: boolean,
): KeyError {
	const rest = allRolledBack
		? "Nothing of this execution was committed: the batch's events share one transaction, and the node stops at its first failing item."
		: "The batch's other events were committed and recorded.";
	return new KeyError(
		`Step "${step}" returned ${bytes} bytes of rows to record for key "${key}", over the cap of ${limit} bytes: its statements were rolled back, so nothing of this event was committed and the key is still reserved. ${rest}`,
		'Limit the RETURNING columns (or the SELECT) to what the later steps read, or set After the Query to Complete the Key if nothing later needs the rows. The error output (Release Key) lets a retry run the step again.',
	);
}
