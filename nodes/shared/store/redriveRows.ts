import { fromStorableJson } from './storableJson';
import type { RedriveClaim } from './keyStoreTypes';

/** claimRedrivesSql's row: [outcome, key, owner_token, attempts, lease_until (s since 1970), delivery]. */
export type RedriveRow = [
	'claimed' | 'dead',
	string,
	string | null,
	number,
	number | null,
	unknown,
];

/** The claim's outcome from its rows, in the order the statement gave them (oldest lease first). */
export function redriveClaimOf(rows: readonly RedriveRow[]): RedriveClaim {
	const claim: RedriveClaim = { claimed: [], deadLetters: [] };
	for (const [outcome, key, token, attempts, leaseUntilEpoch, delivery] of rows) {
		if (outcome === 'dead') claim.deadLetters.push({ key, attempts });
		else
			claim.claimed.push({
				key,
				token: token ?? '',
				attempt: attempts,
				leaseUntilMs: Math.round((leaseUntilEpoch ?? 0) * 1000),
				delivery: fromStorableJson(delivery),
			});
	}
	return claim;
}
