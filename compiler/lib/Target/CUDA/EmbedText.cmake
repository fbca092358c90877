# Writes INPUT as a C++ raw string literal into OUTPUT, for #include inside an
# initializer: the CUDA target pastes its device library and host support
# into every file it writes. `#pragma once` goes: the pasted text is part of
# a main file, where it only draws a warning.
file(READ ${INPUT} content)
string(REPLACE "#pragma once\n" "" content "${content}")
file(WRITE ${OUTPUT} "R\"tpu_embedded(${content})tpu_embedded\"\n")
