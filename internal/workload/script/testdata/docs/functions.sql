\set a abs(-17)
\set b debug(5432.1)
\set c double(5432)
\set d exp(1.0)
\set e greatest(5, 4, 3, 2)
\set f hash(10, 5432)
\set g hash_fnv1a(10, 5432)
\set h hash_murmur2(10, 5432)
\set i int(5.4 * 3.8)
\set j least(5, 4, 3, 2.1)
\set k ln(2.718281828459045)
\set l mod(54, 32)
\set m permute(0, 4)
\set n pi()
\set o pow(2.0, 10)
\set p power(2.0, 10)
\set q random(1, 10)
\set r random_exponential(1, 10, 3.0)
\set s random_gaussian(1, 10, 2.5)
\set t random_zipfian(1, 10, 1.5)
\set u sqrt(2.0)
\set v 5 * 4 + 2 - 1 / 1 % 3
\set w 1 << 2 | 6 # 3 & 5 >> 1
\set x ~5 + -3
\set y 5 > 3 AND NOT 2 >= 3 OR 1 = 2
\set z NULL IS NULL AND (1 ISNULL) IS FALSE AND 2 NOTNULL AND TRUE IS NOT FALSE
SELECT :a, :b, :c, :d, :e, :f, :g, :h, :i, :j, :k, :l, :m, :n, :o, :p, :q, :r, :s, :t, :u, :v, :w, :x, :y, :z;
