// Percentiles of latency samples, and a bootstrap interval for the ratio of two of them.

/** The p-th percentile (0–100) by nearest rank: a value that was measured, never interpolated. */
export function percentile(values, p) {
	if (values.length === 0) return undefined;
	const sorted = Float64Array.from(values).sort();
	const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
	return sorted[rank - 1];
}

/**
 * A 95 % percentile-bootstrap interval of percentile(a, p) / percentile(b, p): both samples are
 * resampled with replacement `iterations` times. For one p99 against another, where no
 * order-statistic interval of a ratio exists.
 */
export function bootstrapRatio(a, b, p, iterations = 1000) {
	const resample = (values) => {
		const out = new Float64Array(values.length);
		for (let i = 0; i < values.length; i++)
			out[i] = values[Math.floor(Math.random() * values.length)];
		return out;
	};
	const ratios = [];
	for (let i = 0; i < iterations; i++)
		ratios.push(percentile(resample(a), p) / percentile(resample(b), p));
	return {
		ratio: percentile(a, p) / percentile(b, p),
		low: percentile(ratios, 2.5),
		high: percentile(ratios, 97.5),
		coverage: 0.95,
	};
}
