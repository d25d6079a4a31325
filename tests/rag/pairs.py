"""Question pairs that calibrate the knowledge base: (stored, asked).

PARAPHRASES must short-circuit (same question, other words); NEAR_MISSES must not (one specific
changed: a year, a number, a unit, a name, a quoted title, a contrast word, a negation).
`bench/rag_lookup.py` prints their similarity distribution; tests/rag/test_shortcut.py checks the tiers.
"""

from __future__ import annotations

RETYPED: list[tuple[str, str]] = [
    ("What is the capital city of France?", "what is the capital city of france"),
    ("What is the capital city of France?", "  WHAT   is the capital city of France ?? "),
    ("How many studio albums were published by Mercedes Sosa between 2000 and 2009 (included)?",
     "how many studio albums were published by mercedes sosa between 2000 and 2009 (included)."),
    ("Who directed the film \"The Birds\"?", "who directed the film \u201cThe Birds\u201d"),
]

PARAPHRASES: list[tuple[str, str]] = [
    ("What is the capital city of France?", "Which city is the capital of France?"),
    ("How many studio albums were published by Mercedes Sosa between 2000 and 2009 (included)?",
     "How many studio albums did Mercedes Sosa publish between 2000 and 2009, included?"),
    ("What was the population of Paris in 2010?", "What was Paris's population in 2010?"),
    ("How far is London from Paris in kilometers?", "What is the distance from London to Paris in km?"),
    ("What is the boiling point of water in Celsius?", "At what temperature in Celsius does water boil?"),
    ("Who directed the film \"The Birds\"?", "Who was the director of the film \"The Birds\"?"),
    ("In which year did the Berlin Wall fall?", "What year did the Berlin Wall fall?"),
    ("What is the highest mountain in Europe?", "Which mountain is the highest in Europe?"),
    ("How many moons does Jupiter have?", "What is the number of moons of Jupiter?"),
    ("Who wrote the novel \"Pride and Prejudice\"?", "Who is the author of the novel \"Pride and Prejudice\"?"),
    ("What is the atomic number of carbon?", "What atomic number does carbon have?"),
    ("How many people in the attached CSV file live in Paris?",
     "How many of the people in the attached CSV file live in Paris?"),
    ("What is the total of the Sales column in the attached spreadsheet?",
     "What is the sum of the Sales column in the attached spreadsheet?"),
    ("Which of these animals is not a mammal: dolphin, bat, shark?",
     "Which of these animals isn't a mammal: dolphin, bat, shark?"),
    ("What was the last name of the US president in 1850?", "What was the surname of the US president in 1850?"),
    ("When was the Eiffel Tower completed?", "In what year was the Eiffel Tower finished?"),
    ("If Eliud Kipchoge could maintain his record-making marathon pace indefinitely, how many thousand hours would it "
     "take him to run the distance between the Earth and the Moon at its closest approach? Round your result to the "
     "nearest 1000 hours.",
     "Suppose Eliud Kipchoge kept his record marathon pace forever: how many thousand hours would he need to run the "
     "distance from the Earth to the Moon at its closest approach? Round the result to the nearest 1000 hours."),
    ("In the 2015 Metropolitan Museum of Art exhibition titled after the Chinese zodiac animal of 2015, how many of "
     "the twelve animals of the Chinese zodiac have a hand visible?",
     "How many of the twelve Chinese zodiac animals have a visible hand in the 2015 Metropolitan Museum of Art "
     "exhibition named after the zodiac animal of 2015?"),
    ("What is the surname of the equine veterinarian mentioned in 1.E Exercises from the chemistry materials licensed "
     "by Marisa Alviar-Agnew & Henry Agnew under the CK-12 license in LibreText's Introductory Chemistry materials?",
     "In LibreText's Introductory Chemistry materials licensed by Marisa Alviar-Agnew & Henry Agnew under the CK-12 "
     "license, what is the surname of the equine veterinarian mentioned in 1.E Exercises?"),
    ("Who nominated the only Featured Article on English Wikipedia about a dinosaur that was promoted in "
     "November 2016?",
     "Who was the nominator of the only dinosaur Featured Article on English Wikipedia promoted in November 2016?"),
    ("What is the minimum number of page links a person must click on to go from the English Wikipedia page on The "
     "Lord of the Rings (the book) to the English Wikipedia page on A Song of Ice and Fire (the book series)?",
     "How many page links, at minimum, must a person click to go from the English Wikipedia page on The Lord of the "
     "Rings (the book) to the English Wikipedia page on A Song of Ice and Fire (the book series)?"),
    ("How many at bats did the Yankee with the most walks in the 1977 regular season have that same season?",
     "In the 1977 regular season, how many at bats did the Yankee with the most walks have that season?"),
]

KNOWN_SLIPS: list[tuple[str, str]] = [
    # Different questions that no guard rule sees: one plain content word swapped. Reported by the bench.
    ("Who is the author of the novel \"Pride and Prejudice\"?",
     "Who is the publisher of the novel \"Pride and Prejudice\"?"),
    ("How many studio albums were published by Mercedes Sosa between 2000 and 2009 (included)?",
     "How many live albums were published by Mercedes Sosa between 2000 and 2009 (included)?"),
    ("What is the total of the Sales column in the attached spreadsheet?",
     "What is the average of the Sales column in the attached spreadsheet?"),
    ("What is the capital city of France?", "What is the largest city of France?"),
    ("What is the atomic number of carbon?", "What is the atomic mass of carbon?"),
]

NEAR_MISSES: list[tuple[str, str, str]] = [
    # (stored, asked, what differs)
    ("What was the population of Paris in 2010?", "What was the population of Paris in 2020?", "years"),
    ("How far is London from Paris in kilometers?", "How far is London from Paris in miles?", "units"),
    ("What is the boiling point of water in Celsius?", "What is the boiling point of water in Fahrenheit?", "units"),
    ("Who directed the film \"The Birds\"?", "Who directed the film \"The Shining\"?", "quoted"),
    ("How many studio albums were published by Mercedes Sosa between 2000 and 2009 (included)?",
     "How many studio albums were published by Joan Baez between 2000 and 2009 (included)?", "names"),
    ("How many studio albums were published by Mercedes Sosa between 2000 and 2009 (included)?",
     "How many studio albums were published by Mercedes Sosa between 2000 and 2019 (included)?", "years"),
    ("What is the highest mountain in Europe?", "What is the lowest mountain in Europe?", "contrast"),
    ("Which of these animals is not a mammal: dolphin, bat, shark?",
     "Which of these animals is a mammal: dolphin, bat, shark?", "negation"),
    ("How many moons does Jupiter have?", "How many moons does Saturn have?", "names"),
    ("What is the atomic number of carbon?", "What is the atomic number of Nitrogen?", "names"),
    ("What was the GDP of Germany in 2015 in US dollars?", "What was the GDP of Germany in 2015 in euros?", "units"),
    ("How many calories are in 100 grams of rice?", "How many calories are in 200 grams of rice?", "numbers"),
    ("What was the last name of the US president in 1850?", "What was the last name of the US president in 1860?",
     "years"),
    ("Who won the Nobel Prize in Physics on 10 December 1921?",
     "Who won the Nobel Prize in Physics on 10 October 1921?", "dates"),
    ("What is the 3rd largest city in Germany?", "What is the 4th largest city in Germany?", "numbers"),
    ("How long does it take light to reach Earth from the Sun in minutes?",
     "How long does it take light to reach Earth from the Sun in seconds?", "units"),
    ("Who was the first person to walk on the Moon?", "Who was the second person to walk on the Moon?", "numbers"),
    ("What is the melting point of iron in Kelvin?", "What is the melting point of iron in Celsius?", "units"),
]
