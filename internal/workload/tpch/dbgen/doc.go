// Package dbgen generates TPC-H data byte-identical to the TPC-H dbgen tool's at the same
// scale factor (Clause 4.2), as a pure function of (scale, table, rows) so that a loader can
// generate chunks of a table in parallel.
//
// Randomness follows Clause 4.2.2 and dbgen's rnd.c: one Park–Miller stream per column
// (seed × 16807 mod 2^31−1), each consuming a fixed number of draws per row, so a chunk's
// first row is reached by skip-ahead (multiplying by 16807^n). Values follow the clause's
// definitions (4.2.2.7 random strings, 4.2.2.9 phone numbers, 4.2.2.10 text, 4.2.2.13 the
// dists.dss word lists and weights, embedded here unchanged) and the table layouts of
// 4.2.3: retail prices, the four suppliers of a part, sparse order keys (8 of every 32), the
// lines of an order (1–7) and the order's status and total derived from them, dates from
// 1992-01-01 with CURRENTDATE 1995-06-17, the suppliers' "Customer Complaints/Recommends".
//
// Comments are substrings of dbgen's 300 MB text pool of grammar sentences (4.2.2.10,
// 4.2.3); the pool is built once per process and held compactly (one byte per word, about
// 60 MB) rather than as text.
//
// Refresh data (Clause 2.5, 4.2.4) follows dbgen -U: update set n inserts SF × 1500 orders
// keyed in the sparse key gaps and deletes SF × 1500 loaded orders.
//
// The scale factor may be fractional (tests use 0.01); it must be below 30000, where dbgen
// switches to 64-bit keys.
package dbgen
