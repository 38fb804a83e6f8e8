\setshell variable_to_be_assigned expr 40 + :client_id
\shell echo literal_argument :variable_to_be_assigned ::literal_starting_with_colon
SELECT :variable_to_be_assigned;
