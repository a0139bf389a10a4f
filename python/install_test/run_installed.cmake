# cmake -P script: `cmake --install` the build into a scratch prefix, then
# import the PyTorch package from there (PYTHONPATH=<prefix>/<PYTHON_DIR>) and
# run a conv and its gradients (import_installed.py).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/run_checked.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${PYTHON_DIR}
    ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/import_installed.py ${prefix})
