"""Three short biology passages the whole-book answering tests build their books from
(tests/core/test_answering.py, test_outcomes.py, test_book_answer.py, tests/core/answer/)."""

MITO = ("Mitochondria release the energy stored in food. The energy is stored in a molecule "
        "called ATP. Cells that need much energy, such as muscle cells, hold many mitochondria.")
PHOTO = ("Photosynthesis takes place in the chloroplasts of leaf cells. Chlorophyll absorbs red "
         "and blue light and reflects green light. Plants release oxygen as a by-product.")
ROOTS = ("Roots anchor a plant in the soil. Root hairs take up water and dissolved minerals. "
         "Some roots, like carrots, store sugar for the winter.")
