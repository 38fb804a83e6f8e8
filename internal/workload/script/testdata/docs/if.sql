\if :client_id = 0
\set x 1
\elif :client_id = 1
\set x 2
\else
\set x 3
\endif
SELECT :x;
