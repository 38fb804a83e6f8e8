\set aid random(1, 100000 * :scale)
\startpipeline
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT 1 AS one \gset
\syncpipeline
SELECT 2;
\endpipeline
SELECT :one;
