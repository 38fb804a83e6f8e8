-- the smallest script: used by the tests of every workload
\set x random(1, 10)
SELECT :x AS x \gset
\if :x > 10
SELECT 1/0;
\endif
