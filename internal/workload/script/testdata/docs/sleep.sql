\sleep 10 ms
\set d 1
\sleep :d us
