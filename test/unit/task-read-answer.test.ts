import { describe, expect, it } from 'vitest';
import { TaskAnswers } from '../../src/tasks/read-answer.js';
import type { TaskView } from '../../src/store/repos/tasks.js';

// The kept answers of task reads: reused only while every input is equal, bounded in size.

const NOW = 1_800_000_000_000;
const config = { storage: { public_url_mode: 'provider' } } as never;

function view(over: Partial<TaskView> = {}): TaskView {
  return {
    task_id: 'cgt-1',
    key_id: 'key_a',
    action: 'textGenerate',
    status: 'SUCCESS',
    fail_reason: 'https://example.com/v.mp4',
    submit_time: 1_799_999_000,
    start_time: 1_799_999_010,
    finish_time: 1_799_999_050,
    progress: '100%',
    data: '{"id":"cgt-1","status":"succeeded"}',
    upstream_id: 'cgt-1',
    url_expires_at: 0,
    deleted_at: 0,
    ...over,
  };
}

describe('TaskAnswers', () => {
  it('serializes once per task version and answers the kept bytes after', () => {
    const answers = new TaskAnswers(config);
    let built = 0;
    const serialize = (a: unknown) => {
      built++;
      return JSON.stringify(a);
    };
    const a = answers.json(view(), 'http://gw', serialize, NOW);
    const b = answers.json(view(), 'http://gw', serialize, NOW + 5000);
    expect(b).toBe(a);
    expect(built).toBe(1);
    expect(JSON.parse(a)).toEqual({
      code: 'success',
      message: '',
      data: { task_id: 'cgt-1', action: 'textGenerate', status: 'SUCCESS', fail_reason: 'https://example.com/v.mp4', submit_time: 1_799_999_000, start_time: 1_799_999_010, finish_time: 1_799_999_050, progress: '100%', data: { id: 'cgt-1', status: 'succeeded' } },
    });
  });

  it('builds a new answer when any shown column, the base or the URL mode changes', () => {
    const mode = { storage: { public_url_mode: 'provider' } };
    const answers = new TaskAnswers(mode as never);
    const base = JSON.parse(answers.json(view(), 'http://gw', JSON.stringify, NOW)).data;
    const changes: [Partial<TaskView>, (d: any) => unknown, unknown][] = [
      [{ data: '{"id":"cgt-1","status":"succeeded","n":2}' }, (d) => d.data.n, 2],
      [{ fail_reason: 'https://example.com/w.mp4' }, (d) => d.fail_reason, 'https://example.com/w.mp4'],
      [{ status: 'FAILURE', fail_reason: 'failed: no' }, (d) => d.status, 'FAILURE'],
      [{ finish_time: 1_799_999_060 }, (d) => d.finish_time, 1_799_999_060],
      [{ start_time: 1_799_999_011 }, (d) => d.start_time, 1_799_999_011],
      [{ submit_time: 1_799_999_001 }, (d) => d.submit_time, 1_799_999_001],
      [{ action: 'generate' }, (d) => d.action, 'generate'],
      // A minted public id: the provider object shows it as `id`.
      [{ upstream_id: 'up-1', data: '{"id":"up-1"}' }, (d) => d.data.id, 'cgt-1'],
    ];
    for (const [over, pick, want] of changes) {
      expect(pick(JSON.parse(answers.json(view(over), 'http://gw', JSON.stringify, NOW)).data)).toEqual(want);
      // And back: the original version answers the original bytes.
      expect(JSON.parse(answers.json(view(), 'http://gw', JSON.stringify, NOW)).data).toEqual(base);
    }
    // A SUCCESS served by the gateway shows the /content URL of the base the client called.
    const served = view({ fail_reason: '' });
    expect(JSON.parse(answers.json(served, 'http://a', JSON.stringify, NOW)).data.fail_reason).toBe('http://a/v1/video/generations/cgt-1/content');
    expect(JSON.parse(answers.json(served, 'http://b', JSON.stringify, NOW)).data.fail_reason).toBe('http://b/v1/video/generations/cgt-1/content');
    // A reload to gateway URLs: the next read shows the gateway's URL, not the kept provider URL.
    mode.storage.public_url_mode = 'gateway';
    expect(JSON.parse(answers.json(view(), 'http://gw', JSON.stringify, NOW)).data.fail_reason).toBe('http://gw/v1/video/generations/cgt-1/content');
  });

  it("follows a running task's progress with time", () => {
    const answers = new TaskAnswers(config);
    const running = view({ status: 'IN_PROGRESS', progress: '10%', fail_reason: '', finish_time: 0, start_time: NOW / 1000 });
    const at0 = JSON.parse(answers.json(running, 'http://gw', JSON.stringify, NOW)).data.progress;
    const at60 = JSON.parse(answers.json(running, 'http://gw', JSON.stringify, NOW + 60_000)).data.progress;
    expect(at0).toBe('10%');
    expect(parseInt(at60, 10)).toBeGreaterThan(50);
  });

  it('keeps at most its limits, dropping the oldest first', () => {
    const answers = new TaskAnswers(config, { tasks: 3, chars: 1_000_000 });
    for (let i = 0; i < 5; i++) answers.json(view({ task_id: `t${i}` }), 'http://gw', JSON.stringify, NOW);
    expect(answers.size).toBe(3);
    let built = 0;
    const count = (a: unknown) => (built++, JSON.stringify(a));
    answers.json(view({ task_id: 't4' }), 'http://gw', count, NOW);
    expect(built).toBe(0);
    answers.json(view({ task_id: 't0' }), 'http://gw', count, NOW);
    expect(built).toBe(1);
    // About 330 characters a task: a budget of 6,400 keeps some, never all 40.
    const small = new TaskAnswers(config, { tasks: 100, chars: 6400 });
    for (let i = 0; i < 40; i++) small.json(view({ task_id: `t${i}` }), 'http://gw', JSON.stringify, NOW);
    expect(small.size).toBeLessThanOrEqual(21);
    expect(small.size).toBeGreaterThan(0);
  });
});
