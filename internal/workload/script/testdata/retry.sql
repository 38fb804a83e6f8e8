-- pgarena's retry test: fail_once fails some attempts with a serialization
-- failure (40001); a retry must draw :a and :b again as the failed attempt
-- did (pgbench restores the client's random state).
\set a random(1, 1000000000)
\set b random_exponential(1, 1000, 2.5)
BEGIN;
SELECT fail_once(:client_id, :a, :b);
END;
