import { setFlagsFromString } from 'node:v8';

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
