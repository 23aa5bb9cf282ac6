'use strict';
/**
 * The editor in a real browser (playwright-core + Debian's chromium) against n8n 2.41.1 with the
 * packed package: log in, find "Document Workflow" in the node panel, add it, switch
 * resources/operations, create the credential through its form (test fails with a wrong key,
 * passes with the right one), and run the submit-and-wait example from the editor.
 * A failing step saves a screenshot under test-results/.
 */
const fs = require('node:fs');
const path = require('node:path');
const e2e = require('../../scripts/e2e/n8n');
const fixtures = require('../../scripts/e2e/fixtures');
const { lines, latestTgz, startSandbox } = require('./helpers');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const RESULTS = path.join(e2e.ROOT, 'test-results');
const enabled = process.env.E2E_BROWSER !== '0' && lines().includes('2');
const run = enabled ? describe : describe.skip;

run('n8n 2.41.1 editor in chromium', () => {
	let sandbox;
	let n8n;
	let browser;
	let page;
	let vars;
	const examples = {};

	/** Runs a step; on failure saves a screenshot named after it, then rethrows. */
	async function step(name, fn) {
		try {
			return await fn();
		} catch (err) {
			if (page) {
				fs.mkdirSync(RESULTS, { recursive: true });
				const file = path.join(RESULTS, `browser-${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
				await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
				err.message += `\n(screenshot: ${path.relative(e2e.ROOT, file)})`;
			}
			throw err;
		}
	}

	/** Picks an option of an n8n (element-plus) select by its visible label. */
	async function choose(selectTestId, label, within) {
		await (within || page).getByTestId(selectTestId).click();
		const option = page.locator('.el-select-dropdown__item:visible').filter({ hasText: label }).first();
		await option.click();
	}

	beforeAll(async () => {
		if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium (or set E2E_BROWSER=0)`);
		sandbox = await startSandbox();
		vars = await fixtures.createExampleWorkflows(sandbox.control);
		n8n = new e2e.N8nInstance({ major: '2', userFolder: path.join(e2e.CACHE, 'test-browser'), port: 5694, fresh: true });
		e2e.installPackageInto(n8n.userFolder, latestTgz());
		await n8n.start();
		await n8n.setupOwner();
		for (const { file, workflow } of e2e.loadExamples(vars)) examples[file.replace(/\.json$/, '')] = workflow;
		const { chromium, selectors } = require('playwright-core');
		selectors.setTestIdAttribute('data-test-id');
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: [
				'--headless',
				'--no-sandbox',
				'--disable-gpu',
				'--disable-quic',
				'--no-first-run',
				'--disable-background-networking',
				'--disable-component-update',
				'--disable-sync',
			],
		});
		page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
		page.setDefaultTimeout(30000);
	});

	afterAll(async () => {
		if (browser) await browser.close();
		if (n8n) await n8n.stop();
		if (sandbox) await sandbox.stop();
	});

	test('log in', async () => {
		await step('login', async () => {
			await page.goto(`${n8n.editorUrl}/signin`);
			await page.locator('input[name=emailOrLdapLoginId]').fill(n8n.owner.email);
			await page.locator('input[name=password]').fill(n8n.owner.password);
			await page.getByTestId('form-submit-button').click();
			await page.waitForURL(/\/home\//);
		});
	});

	test('the node panel finds "Document Workflow" and adds it; resources and operations show their fields', async () => {
		await step('node-panel', async () => {
			await page.goto(`${n8n.editorUrl}/workflow/new`);
			// A manual trigger first, then the action node from the panel.
			await page.getByTestId('canvas-add-button').click();
			await page.getByTestId('node-creator-search-bar').fill('manual');
			await page.getByTestId('node-creator-item-name').filter({ hasText: /manual/i }).first().click();
			await page.keyboard.press('Escape');
			await page.getByTestId('node-creator-plus-button').click();
			await page.getByTestId('node-creator-search-bar').fill('Document Workflow');
			await page.getByTestId('node-creator-item-name').filter({ hasText: /^Document Workflow$/ }).first().click();
			const actions = await page.getByTestId('item-iterator-item').allInnerTexts();
			for (const a of ['Submit a document to a workflow', 'Get the output of a run', 'Wait for a run to finish', 'Get many events', 'Get the original file of a document']) {
				expect(actions.join('\n')).toContain(a);
			}
			await page.getByTestId('item-iterator-item').filter({ hasText: 'Submit a document to a workflow' }).click();
		});
		const ndv = page.getByTestId('ndv');
		const fields = async () =>
			(await ndv.getByTestId('node-parameters').locator('[data-test-id^=parameter-input-]').evaluateAll((els) => els.map((e) => e.getAttribute('data-test-id'))))
				.map((id) => id.replace(/^parameter-input-/, ''))
				.filter((id) => id !== 'field');
		await step('ndv-submit', async () => {
			await ndv.waitFor();
			expect(await fields()).toEqual(expect.arrayContaining(['resource', 'operation', 'workflowId', 'binaryPropertyName', 'reference', 'waitForCompletion']));
		});
		await step('ndv-run-getOutput', async () => {
			await choose('parameter-input-resource', /^Run$/, ndv);
			await choose('parameter-input-operation', /^Get Output/, ndv);
			const f = await fields();
			expect(f).toEqual(expect.arrayContaining(['runId', 'nodeId', 'binaryPropertyName']));
			expect(f).not.toContain('workflowId');
		});
		await step('ndv-document-getOriginal', async () => {
			await choose('parameter-input-resource', /^Document$/, ndv);
			await choose('parameter-input-operation', /original/i, ndv);
			expect(await fields()).toEqual(expect.arrayContaining(['documentId', 'download']));
		});
		await step('ndv-event-getMany', async () => {
			await choose('parameter-input-resource', /^Event$/, ndv);
			expect(await fields()).toEqual(expect.arrayContaining(['returnAll']));
		});
	});

	test('the credential form: the test fails clearly with a wrong key and passes with the right one', async () => {
		const ndv = page.getByTestId('ndv');
		const modal = page.getByTestId('editCredential-modal');
		await step('credential-open', async () => {
			// With no credential yet, n8n 2.x shows a "Connect to <service>" button instead of the select.
			const connect = ndv.getByRole('button', { name: /Connect to Document Workflow/ });
			if (await connect.isVisible()) {
				await connect.click();
			} else {
				await ndv.getByTestId('node-credentials-select').click();
				await page.getByTestId('node-credentials-select-item-new').click();
			}
			await modal.waitFor();
			await modal.getByTestId('parameter-input-baseUrl').locator('input').fill(sandbox.baseUrl);
			await modal.getByTestId('parameter-input-apiKey').locator('input').fill('dwk_00000000000000000000000000000000');
			await modal.getByTestId('credential-save-button').click();
		});
		await step('credential-wrong-key', async () => {
			await modal.getByText('Couldn’t connect with these settings').waitFor();
			await modal.getByText('More details').click();
			await modal.getByText(/API key was rejected \(401\)/).waitFor();
		});
		await step('credential-right-key', async () => {
			const key = modal.getByTestId('parameter-input-apiKey').locator('input');
			await key.click();
			await key.fill(sandbox.apiKey);
			await modal.getByTestId('credential-save-button').click();
			// A passing test closes the form; opened again, it tests again and says so.
			await modal.waitFor({ state: 'hidden' });
			await ndv.getByTestId('credential-edit-button').click();
			await modal.getByText('Connection tested successfully').waitFor();
			await page.keyboard.press('Escape');
		});
	});

	test('the submit-and-wait example runs from the editor and shows the JSON output', async () => {
		await step('import-example', async () => {
			await n8n.importCredentials([
				e2e.documentWorkflowCredential({ id: fixtures.CREDENTIAL_ID, name: fixtures.CREDENTIAL_NAME, baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey }),
			]);
			await n8n.importWorkflows([examples['submit-and-wait-json']]);
		});
		await step('run-example', async () => {
			await page.goto(`${n8n.editorUrl}/workflow/${examples['submit-and-wait-json'].id}`);
			await page.getByTestId('execute-workflow-button').click();
			await page.locator('.el-notification:visible').filter({ hasText: 'Workflow executed successfully' }).waitFor({ timeout: 60000 });
			await page.getByTestId('canvas-node').filter({ hasText: 'Get output' }).dblclick();
			const out = page.getByTestId('output-panel');
			await out.getByText('INV-001').first().waitFor();
			expect(await out.innerText()).toContain('invoice.json');
		});
	});
});
