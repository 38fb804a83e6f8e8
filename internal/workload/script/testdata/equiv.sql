-- deterministic under a fixed --random-seed: pgbench and pgarena must
-- compute the same values (random functions, hashes, permute, \gset, \if)
\set r random(1, 1000000)
\set e random_exponential(1, 1000, 2.5)
\set g random_gaussian(1, 1000, 3.0)
\set z random_zipfian(1, 1000, 1.2)
\set h hash(:r)
\set f hash_fnv1a(:r, 42)
\set p permute(:r, 1000)
\set d double(:r) / 7.0
\set k (:r * 3 + :e) % 97 - :g / 3
SELECT :r * 2 AS twice, :k + 1 AS kk \gset
\if :twice % 3 = 0
\set b 3
\elif :kk < 0
\set b -1
\else
\set b CASE WHEN :z > 10 THEN 10 ELSE :z END
\endif
INSERT INTO equiv (client, r, e, g, z, h, f, p, d, k, twice, kk, b)
  VALUES (:client_id, :r, :e, :g, :z, :h, :f, :p, :d, :k, :twice, :kk, :b);
