import { parseCommand, UsageError, type CommandSpec } from './args.js';
import type { ProjectInput, ProjectView } from '../admin/projects.js';
import { CONFIG_OPTION, JSON_OPTION, adminOn, asCommand, budgetText, configFor, out, tellInstances, withStore } from './common.js';
import { budgetInput, keyFields } from './keys.js';

// `mediagate projects …`: create, list, update.

export function projectLine(p: ProjectView): string {
  return `${p.id}  ${p.name}  keys=${p.keys}  price_ratio=${p.price_ratio}${budgetText(p) || '  budget=none'}`;
}

export const projectFields = {
  'price-ratio': { type: 'string', arg: 'R', help: 'multiplies every price the project\'s keys pay (1: list price, 0.8: 20% off)' },
  budget: { type: 'string', arg: 'USD', help: 'what the project\'s keys may spend together per --budget-period' },
  'budget-period': keyFields['budget-period'],
} as const;

export const projectsCreate = {
  name: 'projects create',
  summary: 'Create a project: a named group of keys with a price ratio and a budget.',
  options: { name: { type: 'string', arg: 'NAME', help: 'the project\'s name (keys join it with --project NAME)', required: true }, ...projectFields, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;
export const projectsList = { name: 'projects list', summary: 'List projects with their keys, price ratio and spend against budget.', options: { ...JSON_OPTION, ...CONFIG_OPTION } } satisfies CommandSpec;
export const projectsUpdate = {
  name: 'projects update',
  summary: 'Change a project (by name or id): only the options given change. --budget none removes the budget, --price-ratio 1 the ratio.',
  args: ['NAME|ID'],
  options: { name: { type: 'string', arg: 'NAME', help: 'a new name' }, ...projectFields, budget: { ...projectFields.budget, arg: 'USD|none' }, ...JSON_OPTION, ...CONFIG_OPTION },
} satisfies CommandSpec;

export function projectInput(values: { name?: string; 'price-ratio'?: string; budget?: string; 'budget-period'?: string }): ProjectInput {
  const input: ProjectInput = { ...budgetInput(values) };
  if (values.name !== undefined) input.name = values.name;
  if (values['price-ratio'] !== undefined) input.price_ratio = values['price-ratio'];
  return input;
}

export async function projectsCreateCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(projectsCreate, argv);
  const { config } = configFor(values);
  const project = await withStore(config, (s) =>
    asCommand(async () => {
      const a = adminOn(config, s);
      const made = await a.projects.create(projectInput(values));
      await a.record('project.create', made.id, { name: made.name, price_ratio: made.price_ratio, budget_usd: made.budget_usd, budget_period: made.budget_period });
      return made;
    }),
  );
  if (values.json) return out(JSON.stringify(project));
  out(`Created project ${projectLine(project)}`);
}

export async function projectsListCommand(argv: string[]): Promise<void> {
  const { values } = parseCommand(projectsList, argv);
  const { config } = configFor(values);
  const projects = await withStore(config, (s) => adminOn(config, s).projects.list(), { mustExist: true });
  if (values.json) return out(JSON.stringify(projects));
  if (!projects.length) return out('No projects. Create one with: npx mediagate projects create --name NAME');
  for (const p of projects) out(projectLine(p));
}

export async function projectsUpdateCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommand(projectsUpdate, argv);
  const { config } = configFor(values);
  const input = projectInput(values);
  if (!Object.keys(input).length) throw new UsageError('projects update: needs at least one of --name, --price-ratio, --budget, --budget-period', projectsUpdate);
  const project = await withStore(
    config,
    (s) =>
      asCommand(async () => {
        const a = adminOn(config, s);
        const p = await a.projects.update(positionals[0], input);
        await a.record('project.update', p.id, { ...input });
        return p;
      }),
    { mustExist: true },
  );
  if (values.json) out(JSON.stringify(project));
  else out(`Updated project ${projectLine(project)}`);
  // Keys carry their project's ratio and budget in the authenticator's cache: running instances drop it.
  return tellInstances(config, 'keys', { project_id: project.id });
}
