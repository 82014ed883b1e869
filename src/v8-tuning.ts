import { setFlagsFromString } from 'node:v8';
import { executionAsyncResource } from 'node:async_hooks';

// Imported first by main.ts, before any other module runs: V8 settings for a long-running server.
//
// Allocation-site pretenuring off. V8 watches where objects are allocated; when at one scavenge
// nearly all objects of one allocation site are still alive, it decides to allocate that site's
// objects directly in the old generation from then on, and it kept that decision in our runs even
// when later scavenges saw most of them die (22-34% alive). In a gateway the decision can be taken
// at an unlucky moment (a scavenge while a hundred requests are in flight, during warm-up or a
// burst of streams) for sites that make per-request objects (the HTTP client's header lists, for
// one). From then on those objects, and the young ones they point to, live until the next full
// collection: the old generation grows by megabytes per scavenge, scavenges take several times
// longer and a full collection comes every half second or so under load. Two processes of the same
// build then differ by about 1.5x in CPU per request, depending only on whether that moment
// happened (docs/benchmarks.md). Without pretenuring every process stays in the fast state; what it
// costs is copying long-lived objects (catalog, caches, held streams) once more before promotion.
setFlagsFromString('--no-allocation-site-pretenuring');

// One of Node's tick objects held for the life of the process. process.nextTick() queues each
// callback as a fresh object literal whose first two keys are computed (two symbols), so V8 builds
// it by adding properties one by one along a chain of shapes (maps) that only the transition tree
// refers to, and weakly: at a full collection when no tick is queued, the chain can be collected,
// nextTick's optimized code and its inline caches then lose what they relied on, and it runs
// unoptimized until it is optimized again, or stays slow. The gateway does full collections under
// load (two in 10 s of GET /v1/models in one count; the bench's raw node:http server none); with
// one forced every second, nextTick took 6.5% of the CPU of serving GET /v1/models against 0.8%
// with one tick object held (docs/benchmarks.md). A held object keeps its shape, and the chain
// behind it, alive. Inside a nextTick callback, async_hooks' executionAsyncResource() is the tick
// object itself.
let heldTick: object | null = null;
process.nextTick(() => {
  heldTick = executionAsyncResource();
});

/** The tick object held (null until the first tick ran); for the test that checks it is one. */
export function keptTickObject(): object | null {
  return heldTick;
}
