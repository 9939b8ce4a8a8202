// n8n's REST API as the editor's Settings → Community nodes page calls it, for a test that has no
// browser: the owner's session, POST/GET /rest/community-packages, the node types the editor loads
// (/types/nodes.json) and the front-end settings. Every call is bounded and says what answered.
// Also what an n8n needs to install from a throw-away registry (registryInstallEnv), shared with the UI suite.

const BROWSER_ID = 'community-api-e2e';

/**
 * A session of the owner: sets the owner up on a fresh n8n, or signs in when it already has one.
 * @param {string} baseUrl
 * @param {{ email: string, password: string }} owner
 * @returns {Promise<string>} the Cookie header of the session
 */
export async function ownerSession(baseUrl, owner) {
	const setup = await fetch(`${baseUrl}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID },
		body: JSON.stringify({ ...owner, firstName: 'Test', lastName: 'Owner' }),
		signal: AbortSignal.timeout(30_000),
	});
	const response = setup.ok
		? setup
		: await fetch(`${baseUrl}/rest/login`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID },
				body: JSON.stringify({ emailOrLdapLoginId: owner.email, password: owner.password }),
				signal: AbortSignal.timeout(30_000),
			});
	const text = await response.text();
	if (!response.ok)
		throw new Error(`owner setup and sign-in answered ${response.status}: ${text.slice(0, 300)}`);
	const cookie = response.headers
		.getSetCookie()
		.map((line) => line.split(';')[0])
		.join('; ');
	if (!/n8n-auth=/.test(cookie)) throw new Error('n8n set no n8n-auth cookie');
	return cookie;
}

/**
 * One call as the signed-in editor makes it; returns the status and the parsed body.
 * @param {string} baseUrl
 * @param {string} cookie
 * @param {string} method
 * @param {string} route e.g. /rest/community-packages
 * @param {unknown} [body]
 * @param {number} [timeoutMs] an install runs npm: allow minutes
 */
export async function editorCall(baseUrl, cookie, method, route, body, timeoutMs = 30_000) {
	const response = await fetch(`${baseUrl}${route}`, {
		method,
		headers: { 'content-type': 'application/json', cookie, 'browser-id': BROWSER_ID },
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(timeoutMs),
	});
	const text = await response.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: response.status, text, json };
}

/**
 * Settings → Community nodes → Install: POST /rest/community-packages { name }.
 * @param {string} baseUrl
 * @param {string} cookie
 * @param {string} name
 */
export async function installPackage(baseUrl, cookie, name) {
	return await editorCall(baseUrl, cookie, 'POST', '/rest/community-packages', { name }, 300_000);
}

/** The packages n8n lists as installed (its installed_packages rows). @param {string} baseUrl @param {string} cookie */
export async function installedPackages(baseUrl, cookie) {
	const { status, text, json } = await editorCall(
		baseUrl,
		cookie,
		'GET',
		'/rest/community-packages',
	);
	if (status !== 200)
		throw new Error(`GET /rest/community-packages answered ${status}: ${text.slice(0, 300)}`);
	return /** @type {Array<{ packageName: string, installedNodes: Array<{ type: string }> }>} */ (
		json.data
	);
}

/**
 * The node type names the editor can use: /types/nodes.json, which n8n writes from what it loaded.
 * @param {string} baseUrl
 * @param {string} cookie
 * @returns {Promise<string[]>}
 */
export async function loadedNodeTypes(baseUrl, cookie) {
	const { status, text, json } = await editorCall(baseUrl, cookie, 'GET', '/types/nodes.json');
	if (status !== 200)
		throw new Error(`GET /types/nodes.json answered ${status}: ${text.slice(0, 300)}`);
	return /** @type {Array<{ name: string }>} */ (json).map((type) => type.name);
}

/** The front-end settings the editor reads at start (GET /rest/settings). @param {string} baseUrl @param {string} cookie */
export async function frontendSettings(baseUrl, cookie) {
	const { status, text, json } = await editorCall(baseUrl, cookie, 'GET', '/rest/settings');
	if (status !== 200)
		throw new Error(`GET /rest/settings answered ${status}: ${text.slice(0, 300)}`);
	return json.data;
}

/**
 * n8n's test-mode switch for one license feature (only with E2E_TESTS=true): installs from a
 * registry other than npmjs.org need feat:communityNodes:customRegistry.
 * @param {string} baseUrl
 * @param {string} feature
 * @param {boolean} enabled
 */
export async function setLicenseFeature(baseUrl, feature, enabled) {
	const response = await fetch(`${baseUrl}/rest/e2e/feature`, {
		method: 'PATCH',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ feature, enabled }),
		signal: AbortSignal.timeout(10_000),
	});
	const text = await response.text();
	if (!response.ok)
		throw new Error(`PATCH /rest/e2e/feature answered ${response.status}: ${text.slice(0, 300)}`);
}

/** The license feature n8n needs to install community packages from a registry other than npmjs.org. */
export const CUSTOM_REGISTRY_FEATURE = 'feat:communityNodes:customRegistry';

/**
 * The environment that lets an n8n install community packages from a throw-away registry: n8n's
 * test mode (so CUSTOM_REGISTRY_FEATURE can be switched on with setLicenseFeature once it is up)
 * and the registry, named twice. n8n's update check runs a bare `npm outdated` in ~/.n8n/nodes,
 * which asks npm's own registry setting, not N8N_COMMUNITY_PACKAGES_REGISTRY: a user of a private
 * registry sets both.
 * @param {string} registryUrl
 */
export function registryInstallEnv(registryUrl) {
	return {
		E2E_TESTS: 'true',
		N8N_COMMUNITY_PACKAGES_REGISTRY: registryUrl,
		npm_config_registry: registryUrl,
		N8N_LOG_LEVEL: 'info',
	};
}
