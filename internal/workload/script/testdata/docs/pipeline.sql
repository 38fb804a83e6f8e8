\set aid random(1, 100000 * :scale)
SELECT 1 AS one \gset
\startpipeline
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\syncpipeline
SELECT 2;
\endpipeline
SELECT :one;
